/**
 * One manager per data directory: two workers on one database would each run the same tasks, and a LIST run twice
 * at once lists two jobs. A lock file holds the owner's pid; a dead owner's (killed, crashed) is taken over.
 */
import {closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync} from 'node:fs'
import {join} from 'node:path'

import {ExitCode, GpunetError} from '../../errors.js'
import {isAlive} from '../../process/alive.js'

/** The lock files this process holds: a second manager in the same process is refused too. */
const held = new Set<string>()

/** Takes the data directory's lock; answers its release. */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, {recursive: true, mode: 0o700})
  const path = join(dataDir, 'manager.lock')
  for (;;) {
    try {
      const fd = openSync(path, 'wx', 0o600)
      writeSync(fd, String(process.pid))
      closeSync(fd)
      held.add(path)
      return () => {
        held.delete(path)
        rmSync(path, {force: true})
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const owner = Number(readFileSync(path, 'utf8'))
      const running = owner === process.pid ? held.has(path) : owner > 0 && isAlive(owner)
      if (running) {
        throw new GpunetError('manager_running', `a deployment manager (pid ${owner}) already uses ${dataDir}`, {
          exitCode: ExitCode.FAILURE,
          hint: 'stop it first, or give this one another --data-dir (each manager pays from the vaults it holds)',
        })
      }
      rmSync(path, {force: true})
    }
  }
}
