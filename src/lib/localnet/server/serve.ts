/** Running a localnet in the current process until SIGINT or SIGTERM (`localnet start` and the background entry). */
import {closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync} from 'node:fs'

import {ExitCode, GpunetError} from '../../errors.js'
import {loadOrCreateKeypair} from '../../keys/wallet.js'
import {isAlive} from '../../process/alive.js'
import {localnetFiles, localnetPortInUse} from '../paths.js'
import type {CooldownsGiven} from '../../deployments/cooldowns.js'
import type {LocalnetIds} from '../../settings/kinds.js'
import type {LocalnetNodeOptions} from '../nodes/node-agent.js'
import {type LocalnetRuntime, startLocalnet} from './server.js'
import type {MarketsSpec} from '../markets/spec.js'

export interface ServeOptions {
  dataDir: string
  port: number
  /** The node agent's settings; no node when absent. */
  node?: LocalnetNodeOptions
  /** The content store's disk use (DEFAULT_CONTENT_MAX_BYTES when absent). */
  contentMaxBytes?: number
  /** The flags that gave them, for `localnet reset` to start it again the same way. */
  startArgs?: string[]
  /** The addresses a new chain is created with. */
  ids?: LocalnetIds
  /** The user's wallet file (settings.ts' walletPath), created and funded on first start. */
  walletFile: string
  /** Browser origins its services answer besides their own (the allowOrigin setting). */
  allowedOrigins?: readonly string[]
  /** Its deployment manager's tunnel grace, in ms (the tunnelGrace setting). */
  tunnelGraceMs?: number
  /** Its deployment manager's drain bound, in ms (the drainTimeout setting). */
  drainTimeoutMs?: number
  /** The secretsKey setting, for the in-process secrets service. */
  secretsKey?: string
  /** The manager's cooldown settings (deployments/cooldowns.ts). */
  cooldowns?: CooldownsGiven
  /** The markets file's markets (`--markets`), and the token's USD price (the tokenUsd setting). */
  markets?: MarketsSpec
  tokenUsd?: number
}

/** Serves until a signal arrives; `onReady` hears the URLs once the localnet answers. */
export async function serveUntilSignal(
  options: ServeOptions,
  onReady: (runtime: LocalnetRuntime) => void,
): Promise<void> {
  mkdirSync(options.dataDir, {recursive: true})
  const release = acquireLock(options.dataDir)
  try {
    // The default wallet is created and funded on first start only.
    const firstStart = !existsSync(localnetFiles(options.dataDir).genesis)
    const wallet = firstStart ? loadOrCreateKeypair(options.walletFile).keypair.publicKey : undefined
    let running
    try {
      running = await startLocalnet({...options, wallet})
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw localnetPortInUse(options.port)
      }
      throw error
    }
    // Listening for the signals before announcing readiness: whoever reads the announcement may stop us at once.
    const stopped = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve)
      process.once('SIGTERM', resolve)
    })
    onReady(running.runtime)
    await stopped
    await running.close()
  } finally {
    release()
  }
}

/** One process per data directory: a lock file holding the owner's pid, taken over when that process is gone. */
function acquireLock(dataDir: string): () => void {
  const path = localnetFiles(dataDir).lock
  for (;;) {
    try {
      const fd = openSync(path, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return () => rmSync(path, {force: true})
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const owner = Number(readFileSync(path, 'utf8'))
      if (owner && owner !== process.pid && isAlive(owner)) {
        throw new GpunetError('localnet_running', `a localnet (pid ${owner}) already uses ${dataDir}`, {
          exitCode: ExitCode.FAILURE,
          hint: 'Stop it with "gpunet localnet stop", or use another --data-dir.',
        })
      }
      rmSync(path, {force: true})
    }
  }
}
