import {Flags} from '@oclif/core'
import {join} from 'node:path'

import {BaseCommand} from '../../base-command.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {dataDir} from '../../lib/private-file.js'
import {KEY_ENV, openSecretsService} from '../../lib/secrets/service/index.js'

export default class SecretsServe extends BaseCommand {
  static override enableJsonFlag = false
  static override summary = 'Run a secrets service (the HTTP API that `secrets set/get/delete` and nodes talk to).'
  static override description = `Stores secrets encrypted (AES-256-GCM) in a SQLite file in --data-dir, or in PostgreSQL with --database-url so several instances share one database. The encryption key comes from ${KEY_ENV} (32 bytes, base64 or hex) or from <data-dir>/secrets.key, created with mode 0600 on first start; instances sharing a database must share the key. Prints the URL on stdout and one line per request on stderr (never a value). Stops on Ctrl-C or SIGTERM.`

  static override examples = [
    '<%= config.bin %> secrets serve',
    '<%= config.bin %> secrets serve --port 0 --data-dir ./secrets-data',
    `${KEY_ENV}="$(openssl rand -base64 32)" <%= config.bin %> secrets serve --host 0.0.0.0 --database-url postgres://gpunet@db/gpunet`,
  ]

  static override flags = {
    host: Flags.string({description: 'address to listen on', default: '127.0.0.1'}),
    port: Flags.integer({description: 'port to listen on (0 picks a free one)', default: 8787, min: 0, max: 65535}),
    'data-dir': Flags.string({
      description: 'folder of the SQLite file and the key file (default: ~/.local/share/gpunet/secrets)',
      helpValue: 'DIR',
    }),
    'database-url': Flags.string({
      description: 'PostgreSQL URL; replaces the SQLite file',
      env: 'GPUNET_SECRETS_DATABASE_URL',
      helpValue: 'URL',
    }),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(SecretsServe)
    const {service, storage, key} = await openSecretsService({
      dataDir: flags['data-dir'] ?? join(dataDir(), 'secrets'),
      databaseUrl: flags['database-url'],
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
    this.note(`Storage: ${storage}`)
    this.note(`Key: ${key}`)
    this.say(`Secrets service listening on ${url}`)
    await new Promise<void>((resolve) => {
      const stop = () => resolve()
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
    })
    await service.close()
  }
}
