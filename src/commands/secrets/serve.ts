import * as Flags from '@oclif/core/flags'
import {join} from 'node:path'

import {BaseCommand} from '../../cli/base-command.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {ipfsGatewayFlag, marketFlags, secretsDatabaseUrlFlag} from '../../cli/flags.js'
import {dataDir} from '../../lib/keys/private-file.js'
import {connectJobAuthority} from '../../lib/network-connection.js'
import {DEFAULT_LIMITS, KEY_ENV, openSecretsService} from '../../lib/secrets/service/index.js'

export default class SecretsServe extends BaseCommand {
  static override summary = 'Run a secrets service (the HTTP API that `secrets set/get/delete` and nodes talk to).'
  static override description = `Stores secrets encrypted (AES-256-GCM) in a SQLite file in --data-dir, or in PostgreSQL with --database-url so several instances share one database. The encryption key comes from ${KEY_ENV} (32 bytes, base64 or hex) or from <data-dir>/secrets.key, created with mode 0600 on first start; instances sharing a database must share the key.

Job logins (a node reading the secrets of the job it runs) are checked on the chain of --network: the node must have a run of the job, and the job must not be done; the token reads exactly the names the job's definition (read by its CID from --ipfs-gateway, hash checked) refers to, and stops working when the job ends.

Prints the URL on stdout (with --json, one JSON document once it listens) and one line per request on stderr (never a value). Stops on Ctrl-C or SIGTERM.`

  static override examples = [
    '<%= config.bin %> secrets serve',
    '<%= config.bin %> secrets serve --port 0 --data-dir ./secrets-data --json',
    `${KEY_ENV}="$(openssl rand -base64 32)" <%= config.bin %> secrets serve --network devnet --host 0.0.0.0 --database-url postgres://gpunet@db/gpunet`,
    '<%= config.bin %> secrets serve --network mainnet --rpc https://my-rpc.example --ipfs-gateway https://gateway.example',
  ]

  static override flags = {
    network: marketFlags.network,
    profile: marketFlags.profile,
    rpc: marketFlags.rpc,
    'ipfs-gateway': ipfsGatewayFlag,
    host: Flags.string({description: 'address to listen on', default: '127.0.0.1'}),
    port: Flags.integer({description: 'port to listen on (0 picks a free one)', default: 8787, min: 0, max: 65535}),
    'data-dir': Flags.string({
      description: 'folder of the SQLite file and the key file (default: ~/.local/share/gpunet/secrets)',
      helpValue: 'DIR',
    }),
    'database-url': secretsDatabaseUrlFlag,
    'max-owner-bytes': Flags.integer({
      description: 'bytes one owner may store (names plus encrypted values)',
      default: DEFAULT_LIMITS.bytesPerOwner,
      min: 1,
    }),
    'max-secrets-per-owner': Flags.integer({
      description: 'secrets one owner may store',
      default: DEFAULT_LIMITS.secretsPerOwner,
      min: 1,
    }),
    'max-total-bytes': Flags.integer({
      description: 'bytes all owners together may store',
      default: DEFAULT_LIMITS.totalBytes,
      min: 1,
    }),
  }

  static mcp = {exclude: 'a server that never returns'}

  async run(): Promise<void> {
    const {flags} = await this.parse(SecretsServe)
    const {network} = this.settings
    const chain = await connectJobAuthority(this.settings, (line) => this.note(line))
    const {service, storage, key} = await openSecretsService({
      dataDir: flags['data-dir'] ?? join(dataDir(process.env), 'secrets'),
      databaseUrl: this.settings.typed('secretsDatabaseUrl')?.value,
      env: {[KEY_ENV]: this.settings.value('secretsKey')},
      allowedOrigins: this.settings.typed('allowOrigin')?.value,
      authority: chain.authority,
      limits: {
        bytesPerOwner: flags['max-owner-bytes'],
        secretsPerOwner: flags['max-secrets-per-owner'],
        totalBytes: flags['max-total-bytes'],
      },
      log: (line) => process.stderr.write(`${line}\n`),
    })
    let url: string
    try {
      url = await service.listen(flags.port, flags.host)
    } catch (error) {
      await service.close()
      const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
      throw new GpunetError(
        inUse ? 'port_in_use' : 'listen_failed',
        `cannot listen on ${flags.host}:${flags.port}: ${(error as Error).message}`,
        {
          exitCode: ExitCode.USAGE,
          hint: inUse ? 'choose another --port, or --port 0 for a free one' : undefined,
        },
      )
    }
    if (this.jsonEnabled()) {
      process.stdout.write(
        `${JSON.stringify({url, network, rpcUrl: chain.rpcUrl, ipfsGateway: chain.ipfsGateway, storage, key}, null, 2)}\n`,
      )
    } else {
      this.note(`Network: ${network} (RPC ${chain.rpcUrl}, definitions from ${chain.ipfsGateway})`)
      this.note(`Storage: ${storage}`)
      this.note(`Key: ${key}`)
      this.say(`Secrets service listening on ${url}`)
    }
    await new Promise<void>((resolve) => {
      const stop = () => resolve()
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
    })
    await service.close()
  }
}
