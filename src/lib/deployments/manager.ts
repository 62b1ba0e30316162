/**
 * The deployment manager: its store and vault key in a data directory, its worker, and its API. It reaches the chain
 * over RPC as any client does, inside the localnet or as `gpunet deployment serve`.
 */
import {join} from 'node:path'

import {ExitCode, GpunetError} from '../errors.js'
import {isLoopbackAddress} from '../http/loopback-guard.js'
import type {MarketNetwork} from '../market/connect.js'
import type {Network} from '../network.js'
import {createApiAuth} from './api-auth.js'
import {createDeploymentApi, type ExtraRoutes} from './api.js'
import type {ManagerContext} from './context.js'
import {lockDataDir} from './data-dir-lock.js'
import {Draining} from './draining.js'
import {openSqliteDeploymentStore} from './sqlite-store.js'
import type {DeploymentStore} from './store.js'
import {loadVaultKey, vaultSeal} from './vault-seal.js'
import {startWorker, type Worker} from './worker.js'

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
  /** Routes served beside the deployments (the localnet's credits). */
  routes?: ExtraRoutes
}

export interface RunningManager {
  url: string
  worker: Worker
  context: ManagerContext
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
  const files = managerFiles(options.dataDir)
  const release = lockDataDir(options.dataDir)
  let key: Buffer
  let store: DeploymentStore
  try {
    key = await loadVaultKey(files.vaultKey)
    store = openSqliteDeploymentStore(files.database)
  } catch (error) {
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
    draining: new Draining(),
  }
  const api = createDeploymentApi(context, createApiAuth({db: store.db, now: options.now}), options.routes)
  let url: string
  try {
    url = await api.listen(options.port ?? 0, host)
  } catch (error) {
    await api.close()
    await store.close()
    release()
    throw error
  }
  const worker = startWorker(context)
  return {
    url,
    worker,
    context,
    async close() {
      await api.close()
      await worker.stop()
      await store.close()
      release()
    },
  }
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || isLoopbackAddress(host)
}
