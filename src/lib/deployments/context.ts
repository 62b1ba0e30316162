/** What the manager's parts share: the store, the chain (as any client reaches it), the vault seal and the clock. */
import type {MarketNetwork} from '../market/connect.js'
import type {Network} from '../network.js'
import type {DeploymentLoad, HoldsAtZero} from './autoscale/load.js'
import type {Cooldowns} from './cooldowns.js'
import type {Draining} from './draining.js'
import type {DeploymentStore} from './store/store.js'
import type {JobRow} from './types.js'
import type {VaultSeal} from './paying/vault-seal.js'

/**
 * The gateway in front of a manager (the localnet's, `deployment serve`'s): deployments' stable URLs and each
 * replica's port state.
 */
export interface ManagerGateway {
  /** The stable URL of the deployment's first exposed port, or of its exposed port `port`. */
  deploymentUrl(deployment: string, port?: number): string
  /** True when the job's port serves (ONLINE on its node; or its service answered the manager's probe). */
  online(job: Pick<JobRow, 'job' | 'tunnel'>, port: number): boolean
}

export interface ManagerContext {
  store: DeploymentStore
  net: MarketNetwork
  network: Network
  seal: VaultSeal
  /** ms */
  now(): number
  log(line: string): void
  env: NodeJS.ProcessEnv
  /**
   * This manager's name in the deployments' leases (manager-lease.ts); several managers on one database each need
   * their own. Default: one per process.
   */
  holder?: string
  /** Throws unless this manager still holds the deployment's lease: called before a payment is saved (paying.ts). */
  holdLease?: (deployment: string) => Promise<void>
  /** The replicas being retired (draining.ts); absent, nothing is drained. */
  draining?: Draining
  /** How long a drain waits, before the deployment's time_scale (draining.ts); DRAIN_TIMEOUT_MS when absent. */
  drainTimeoutMs?: number
  /** The gateway serving the deployments' stable URLs (the localnet's); absent, replicas have their own URLs only. */
  gateway?: ManagerGateway
  /** The retry, insufficient-funds and rapid-completion cooldowns (cooldowns.ts); absent, the network's defaults. */
  cooldowns?: Cooldowns
  /** The tunnel watch's grace before scaling, in ms (tunnel-watch.ts); TUNNEL_GRACE_MS (60 s) when absent. */
  tunnelGraceMs?: number
  /**
   * True while a stream of the deployment proxies' events feeds the tunnel watch (followProxies: the localnet's
   * gateway); otherwise the job watch feeds it from the manager's own probe (job-watch.ts).
   */
  tunnelStream?: boolean
  /** The deployments' traffic as the gateways in front see it (autoscale/load.ts); absent, no policy can scale. */
  load?: DeploymentLoad
  /** Whether the gateways in front hold a deployment's requests while it has no replica ready (autoscale/load.ts). */
  holdsAtZero?: HoldsAtZero
}
