/**
 * The deployment manager: its store and vault key in a data directory, its worker, and its API. It reaches the chain
 * over RPC as any client does, inside the localnet or as `gpunet deployment serve`.
 */
import {join} from 'node:path'

import {ExitCode, GpunetError} from '../errors.js'
import {isLoopbackAddress} from '../http/loopback-guard.js'
import type {MarketNetwork} from '../market/connect.js'
import type {Network} from '../network.js'
import {createApiAuth} from './api/api-auth.js'
import {createDeploymentApi, type CreditsPlugin} from './api/api.js'
import type {ManagerContext} from './context.js'
import {checkCooldowns, type CooldownsGiven} from './cooldowns.js'
import {lockDataDir} from './store/data-dir-lock.js'
import {holderOf, leaseHolder} from './store/manager-lease.js'
import {openPgDeploymentStore} from './store/pg-store.js'
import {Draining} from './draining.js'
import {openSqliteDeploymentStore} from './store/sqlite-store.js'
import type {DeploymentStore} from './store/store.js'
import {loadCheckedVaultKey} from './paying/vault-key-check.js'
import {vaultSeal} from './paying/vault-seal.js'
import {startWorker, type Worker} from './manager/worker.js'
import {followProxies} from './manager/tunnel-watch.js'
import type {HoldBounds} from '../gateway/holding.js'
import type {ProxyEventSource} from '../gateway/proxy-events.js'
import {type ManagerGatewayServer, startManagerGateway} from './manager-gateway.js'
import {gatewayLoad, type GatewayTraffic} from './autoscale/gateway-load.js'
import {holdsAtZero} from './autoscale/holds-at-zero.js'
import {storeLoad} from './autoscale/store-load.js'
import {deploymentIdsByLabel} from './stable-routes.js'

/** The files of a manager's data directory. */
export function managerFiles(dataDir: string) {
  return {
    /** Deployments, revisions, jobs, tasks, events, vaults (sealed) and API keys (hashed). */
    database: join(dataDir, 'deployments.db'),
    /** The key that seals the vaults (mode 0600): back it up with the database, or the vaults' funds are lost. */
    vaultKey: join(dataDir, 'vaults.key'),
    /** The pid of the manager using the directory (data-dir-lock.ts). */
    lock: join(dataDir, 'manager.lock'),
  }
}

export interface ManagerOptions {
  dataDir: string
  /**
   * postgres://… to share one database with other managers (their leases split the work); else the SQLite file in
   * dataDir, which one manager at a time may use.
   */
  databaseUrl?: string
  /** A PostgreSQL schema of its own (tests); default `public`. */
  databaseSchema?: string
  /** The vault key's file (default: dataDir's vaults.key): the same key on every manager of one database. */
  vaultKeyFile?: string
  /** This manager's name in the leases (default: host, pid and a random part). */
  holder?: string
  net: MarketNetwork
  network: Network
  /** 127.0.0.1 unless told otherwise. */
  host?: string
  /** 0 picks a free one. */
  port?: number
  /**
   * Listening beyond loopback is refused unless this says TLS is terminated in front of the manager (a proxy):
   * its wallet headers are lasting credentials and must never cross a network in clear.
   */
  tlsTerminated?: boolean
  log?: (line: string) => void
  /** Where the crash points of the tests are read (crash-points.ts; `deployment serve` gives its own): none unless given. */
  env?: NodeJS.ProcessEnv
  now?: () => number
  /** The credit routes, served beside the deployments under /api (the localnet's). */
  credits?: CreditsPlugin
  /** Browser origins the API answers besides its own while on loopback (the allowOrigin setting). */
  allowedOrigins?: readonly string[]
  /** The cooldowns (the manager's cooldown settings); a part left out is the network's default. */
  cooldowns?: CooldownsGiven
  /** The tunnel watch's grace before scaling, in ms (the tunnelGrace setting; 60 s when absent). */
  tunnelGraceMs?: number
  /** How long a drain waits for what is in flight to a retired replica, in ms (the drainTimeout setting; 10 min). */
  drainTimeoutMs?: number
  /**
   * The deployment proxies' events the tunnel watch follows (the localnet's gateway); absent, it is fed by the
   * manager's own probe of each job's service (manager/job-watch.ts).
   */
  proxyEvents?: ProxyEventSource
  /**
   * A gateway of its own on 127.0.0.1 at this port (0 picks a free one), serving its deployments' stable URLs in
   * front of their replicas' service URLs (`deployment serve`; manager-gateway.ts); absent, none.
   */
  gatewayPort?: number
  /** That gateway's bounds of requests held while a deployment starts from zero (gateway/holding.ts). */
  hold?: Partial<HoldBounds>
  /** The gateway in this process whose traffic is the manager's load (the localnet's), when it has none of its own. */
  traffic?: GatewayTraffic
}

export interface RunningManager {
  url: string
  worker: Worker
  context: ManagerContext
  /** Its own gateway, when it was given a gatewayPort. */
  gateway: ManagerGatewayServer | null
  close(): Promise<void>
}

/** The one refusal of a non-loopback address without TLS in front. */
export function refuseClearText(host: string): GpunetError {
  return new GpunetError(
    'tls_required',
    `refusing to serve the deployment manager on ${host} without TLS in front of it`,
    {
      exitCode: ExitCode.USAGE,
      hint:
        'wallet headers are lasting credentials: put a TLS proxy in front and pass --tls-terminated, or listen on ' +
        '127.0.0.1 (see docs/deployment-manager.md)',
    },
  )
}

/** Opens the store, starts the worker and listens. */
export async function startDeploymentManager(options: ManagerOptions): Promise<RunningManager> {
  const host = options.host ?? '127.0.0.1'
  if (!options.tlsTerminated && !isLoopbackHost(host)) throw refuseClearText(host)
  // Before the data directory is locked or the store opened: a bad cooldown starts nothing.
  const cooldowns = checkCooldowns(options.cooldowns)
  const files = managerFiles(options.dataDir)
  // One manager per SQLite file; on PostgreSQL the leases keep managers apart instead.
  const release = options.databaseUrl ? () => {} : lockDataDir(options.dataDir)
  let key: Buffer
  let store: DeploymentStore | undefined
  try {
    store = options.databaseUrl
      ? await openPgDeploymentStore({connectionString: options.databaseUrl, schema: options.databaseSchema})
      : openSqliteDeploymentStore(files.database)
    key = await loadCheckedVaultKey(options.vaultKeyFile ?? files.vaultKey, store)
  } catch (error) {
    await store?.close()
    release()
    throw error
  }
  const context: ManagerContext = {
    store,
    net: options.net,
    network: options.network,
    seal: vaultSeal(key),
    now: options.now ?? Date.now,
    log: options.log ?? (() => {}),
    env: options.env ?? {},
    holder: options.holder,
    draining: new Draining(),
    cooldowns,
    tunnelGraceMs: options.tunnelGraceMs,
    drainTimeoutMs: options.drainTimeoutMs,
  }
  // Drains are marked in the store, and wait for what the other managers' gateways on it have in flight.
  context.draining?.shareThrough(store, holderOf(context))
  context.holdLease = leaseHolder(context)
  context.holdsAtZero = holdsAtZero(context)
  const auth = createApiAuth({rows: store.apiKeyRows, now: options.now})
  const api = createDeploymentApi(context, auth, options.credits, options.allowedOrigins)
  let url: string
  let gateway: ManagerGatewayServer | null = null
  try {
    // Before the worker: its first pass already drains and scales with the gateway's counts.
    if (options.gatewayPort !== undefined)
      gateway = await startManagerGateway(context, options.gatewayPort, {
        hold: options.hold,
        allowedOrigins: options.allowedOrigins,
      })
    url = await api.listen(options.port ?? 0, host)
  } catch (error) {
    await gateway?.close()
    await api.close()
    await store.close()
    release()
    throw error
  }
  // Before the worker, which follows the held requests from its start.
  const traffic = gateway?.gateway ?? options.traffic
  // On a shared PostgreSQL, through the store: the manager holding a deployment's lease sees every gateway's share.
  const shared =
    traffic && options.databaseUrl
      ? storeLoad(store, traffic, holderOf(context), deploymentIdsByLabel(store), {log: context.log})
      : null
  if (traffic) context.load = shared ?? gatewayLoad(traffic, deploymentIdsByLabel(store))
  // Followed before the first pass, so that no pass feeds the watch from a probe where the stream does.
  const tunnels = options.proxyEvents ? followProxies(context, options.proxyEvents) : null
  const worker = startWorker(context)
  return {
    url,
    worker,
    context,
    gateway,
    async close() {
      // The gateway first: its requests read the store.
      await gateway?.close()
      await api.close()
      await tunnels?.stop()
      await worker.stop()
      await shared?.stop()
      await store.close()
      release()
    },
  }
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || isLoopbackAddress(host)
}
