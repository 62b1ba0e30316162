import * as Flags from '@oclif/core/flags'
import {join} from 'node:path'

import {BaseCommand} from '../../cli/base-command.js'
import {managerDatabaseUrlFlag, marketFlags, vaultKeyFileFlag} from '../../cli/flags.js'
import {cooldownsFromSettings} from '../../lib/deployments/cooldowns.js'
import {CRASH_ENV} from '../../lib/deployments/crash-points.js'
import {managerFiles, refuseClearText, startDeploymentManager} from '../../lib/deployments/manager.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {checkHoldBounds, HOLD_MS, MAX_HELD} from '../../lib/gateway/holding.js'
import {durationMs} from '../../lib/text/durations.js'
import {isLoopbackAddress} from '../../lib/http/loopback-guard.js'
import {confirmSpend} from '../../lib/market/rpc/confirm.js'
import {connectMarket} from '../../lib/network-connection.js'
import {dataDir} from '../../lib/keys/private-file.js'
import {redactUrl} from '../../lib/secrets/service/pg-failure.js'

export default class DeploymentServe extends BaseCommand {
  static override summary = 'Run a deployment manager: the API under /api/deployments that keeps deployments running.'
  static override description = `A self-hosted manager, as the localnet runs one inside it: it lists, extends and stops each deployment's jobs from the deployment's vault, a keypair it holds sealed (AES-256-GCM) with the key in <data-dir>/vaults.key (mode 0600). Back up that file with <data-dir>/deployments.db: lose it and the vaults' funds are lost (docs/deployment-manager.md).

It listens on 127.0.0.1. Another --host is refused unless --tls-terminated says a TLS proxy sits in front of it: wallet headers are lasting credentials and must not cross a network in clear.

Several managers can share one PostgreSQL (--database-url): each works on a deployment only under its lease in the database, and a manager that dies leaves its deployments to the others once its leases run out. They must share the vault key (--vault-key-file): a manager whose key is not the database's refuses to start (exit 3), and none makes a new key beside existing vaults.

It serves each of its deployments at a stable URL of its own, http://<deployment>.deploy.localhost:<gateway port>/ on 127.0.0.1 (--gateway-port; a free port unless set): gpunet's gateway, as the localnet runs one, spreading requests over the replicas that answer the manager's probe, through their own service URLs (https on devnet and mainnet), draining a retired replica first. A deployment whose policy scales it to zero has its requests held while no replica is ready (--max-held per deployment, each up to --hold-timeout), then 503 with Retry-After. \`deployment get\` lists it as the deployment's stable endpoint. Autoscaling follows the requests through it (docs/deployments.md, "Autoscaling"); requests sent to the network's own URL are not seen.

On devnet and mainnet it pays from the vaults with real tokens, so it asks once for confirmation (or --yes). Prints the URL on stdout (with --json, one JSON document once it listens). Stops on Ctrl-C or SIGTERM.`

  static override examples = [
    '<%= config.bin %> deployment serve',
    '<%= config.bin %> deployment serve --port 0 --data-dir ./manager --json',
    '<%= config.bin %> deployment serve --gateway-port 28990',
    '<%= config.bin %> deployment serve --gateway-port 28990 --hold-timeout 10m --max-held 20',
    '<%= config.bin %> deployment serve --network devnet --yes',
    '<%= config.bin %> deployment serve --network mainnet --host 0.0.0.0 --tls-terminated --yes',
    'GPUNET_MANAGER_DATABASE_URL=postgres://gpunet@db/gpunet <%= config.bin %> deployment serve --network mainnet --vault-key-file /etc/gpunet/vaults.key --yes',
  ]

  static override flags = {
    network: marketFlags.network,
    profile: marketFlags.profile,
    rpc: marketFlags.rpc,
    'priority-fee': marketFlags['priority-fee'],
    'max-priority-fee': marketFlags['max-priority-fee'],
    host: Flags.string({description: 'address to listen on', default: '127.0.0.1'}),
    port: Flags.integer({
      description: 'port to listen on (0 picks a free one); 3001 is where the network kit looks on localnet',
      default: 3001,
      min: 0,
      max: 65535,
    }),
    'gateway-port': Flags.integer({
      description: "port of the gateway serving the deployments' stable URLs on 127.0.0.1 (0 picks a free one)",
      default: 0,
      min: 0,
      max: 65535,
      helpValue: 'PORT',
    }),
    'max-held': Flags.integer({
      description: 'requests its gateway holds per deployment starting from zero replicas; more get 503 at once',
      default: MAX_HELD,
      helpValue: 'N',
    }),
    'hold-timeout': Flags.string({
      description: 'how long its gateway holds a request of a deployment starting from zero (1s to 30m)',
      default: `${HOLD_MS / 1000}s`,
      helpValue: 'DURATION',
    }),
    'data-dir': Flags.string({
      description: 'folder of the database and the vault key (default: ~/.local/share/gpunet/deployments/<network>)',
      helpValue: 'DIR',
    }),
    'tls-terminated': Flags.boolean({
      description: 'allow a --host beyond loopback: a TLS proxy in front of this manager terminates TLS',
    }),
    'database-url': managerDatabaseUrlFlag,
    'vault-key-file': vaultKeyFileFlag,
    yes: Flags.boolean({char: 'y', description: 'pay from the vaults without asking (devnet, mainnet)'}),
  }

  static mcp = {exclude: 'a server that never returns'}

  async run(): Promise<void> {
    const {flags} = await this.parse(DeploymentServe)
    const {network} = this.settings
    const host = flags.host
    if (!flags['tls-terminated'] && host !== 'localhost' && !isLoopbackAddress(host)) throw refuseClearText(host)
    // A bad cooldown setting or hold bound is exit 2 here, before the confirmation and before anything starts.
    const cooldowns = cooldownsFromSettings(this.settings)
    const hold = checkHoldBounds({maxHeld: flags['max-held'], holdMs: durationMs(flags['hold-timeout']) ?? Number.NaN})
    await confirmSpend(
      network,
      `Run a deployment manager on ${network}? It lists and extends jobs with the tokens owners put in their vaults.`,
      flags.yes,
    )
    const net = await connectMarket(this.settings, (line) => this.note(line))
    // Each deployment's definition is uploaded when it is created: without a content store none could be.
    net.content().requireUploader()
    const folder = flags['data-dir'] ?? join(dataDir(process.env), 'deployments', network)
    const databaseUrl = this.settings.typed('managerDatabaseUrl')?.value
    const vaultKeyFile = this.settings.typed('managerVaultKeyFile')?.value
    let manager
    try {
      manager = await startDeploymentManager({
        dataDir: folder,
        databaseUrl,
        vaultKeyFile,
        net,
        network,
        host,
        port: flags.port,
        gatewayPort: flags['gateway-port'],
        hold,
        tlsTerminated: flags['tls-terminated'],
        log: (line) => process.stderr.write(`${line}\n`),
        env: process.env,
        allowedOrigins: this.settings.typed('allowOrigin')?.value,
        cooldowns,
        tunnelGraceMs: this.settings.typed('tunnelGrace')?.value,
      })
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'EADDRINUSE' && code !== 'EADDRNOTAVAIL') throw error
      throw new GpunetError('port_in_use', `cannot listen: ${(error as Error).message}`, {
        exitCode: ExitCode.USAGE,
        hint: 'choose another --port or --gateway-port, or 0 for a free one',
      })
    }
    const files = managerFiles(folder)
    const database = databaseUrl ? `PostgreSQL ${redactUrl(databaseUrl)}` : files.database
    const vaultKey = vaultKeyFile ?? files.vaultKey
    if (process.env[CRASH_ENV]) this.note(`${CRASH_ENV}=${process.env[CRASH_ENV]}: this manager kills itself there`)
    const stableUrls = manager.gateway!.deploymentUrl('<deployment>')
    if (this.jsonEnabled()) {
      const ready = {
        url: manager.url,
        stableUrls,
        gatewayPort: manager.gateway!.port,
        network,
        rpcUrl: net.rpcUrl,
        database,
        vaultKey,
      }
      process.stdout.write(`${JSON.stringify(ready, null, 2)}\n`)
    } else {
      this.note(`Network: ${network} (RPC ${net.rpcUrl})`)
      this.note(`Database: ${database}`)
      this.note(`Vault key: ${vaultKey} (back it up: without it the vaults' funds are lost)`)
      this.note(`Stable URLs: ${stableUrls}`)
      this.say(`Deployment manager listening on ${manager.url}`)
    }
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve())
      process.once('SIGTERM', () => resolve())
    })
    await manager.close()
  }
}
