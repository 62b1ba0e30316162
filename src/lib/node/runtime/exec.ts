/**
 * A command run inside a running operation, for the node API's `/exec`: in its container through podman's API
 * (podman-api.ts, which gives a TTY session its terminal and window size), or a process on the host with the
 * operation's folder and environment. A host TTY session runs under util-linux `script`, which gives it a
 * pseudo-terminal: a resize is `stty` on that terminal, whose kernel signals SIGWINCH to what runs on it.
 */
import {type ChildProcess, execFile, spawn} from 'node:child_process'
import {randomUUID} from 'node:crypto'
import type {EventEmitter} from 'node:events'
import {readdirSync, readFileSync, readlinkSync} from 'node:fs'
import type {Readable, Writable} from 'node:stream'

import {ExitCode, GpunetError} from '../../errors.js'

/** How to run it: a terminal of this size, or plain pipes (stdout and stderr apart). */
export interface ExecOptions {
  tty: boolean
  cols?: number
  rows?: number
}

/**
 * What runs the command, as a child process shows it: its three streams, then 'close' (exit code, signal) once its
 * output is read, or 'error' when it could not start.
 */
export type ExecChild = EventEmitter & {
  readonly stdin: Writable | null
  readonly stdout: Readable | null
  readonly stderr: Readable | null
}

/** A command started inside an operation. */
export interface ExecProcess {
  child: ExecChild
  /** Sets the terminal's size (a TTY session only). */
  resize(cols: number, rows: number): void
  /** Ends it and every process it started (SIGKILL), found by its marker where they left its process group. */
  kill(): void
}

/**
 * A session whose processes carry a fresh marker (`start` puts `GPUNET_EXEC=<marker>` in their environment), so
 * that kill() finds them from the host: ending a container runtime's session leaves its command running.
 */
export function markedSession(start: (env: readonly string[]) => ExecProcess): ExecProcess {
  const marker = randomUUID()
  return withMarker(start([`${EXEC_MARKER}=${marker}`]), marker)
}

/**
 * `cmd` on the host in the folder and with the environment of the operation's process `pid`: the environment
 * holds the operation's marker, so what it starts ends with the operation (host-process.ts).
 */
export function hostExec(pid: number | undefined, cmd: readonly string[], options: ExecOptions): ExecProcess {
  const place = pid === undefined ? null : processPlace(pid)
  if (!place) {
    throw new GpunetError('operation_gone', 'The operation has no process to run the command beside.', {
      exitCode: ExitCode.NOT_FOUND,
    })
  }
  const marker = randomUUID()
  const spawnOptions = {env: {...place.env, [EXEC_MARKER]: marker}, cwd: place.cwd}
  const proc = options.tty ? underTerminal([...cmd], spawnOptions, options) : piped(cmd[0]!, cmd.slice(1), spawnOptions)
  return withMarker(proc, marker)
}

/** The env variable that marks every process of one exec session. */
export const EXEC_MARKER = 'GPUNET_EXEC'

/** kill() also ends every process carrying the session's marker (a container's are visible in the host's /proc). */
function withMarker(proc: ExecProcess, marker: string): ExecProcess {
  const needle = Buffer.from(`${EXEC_MARKER}=${marker}\0`)
  return {
    ...proc,
    kill: () => {
      proc.kill()
      for (const pid of processIds()) {
        try {
          if (readFileSync(`/proc/${pid}/environ`).includes(needle)) process.kill(pid, 'SIGKILL')
        } catch {
          // Gone already, or not ours to read.
        }
      }
    },
  }
}

function processIds(): number[] {
  try {
    return readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number)
      .filter((pid) => pid !== process.pid)
  } catch {
    return []
  }
}

function piped(command: string, args: readonly string[], options: {env: NodeJS.ProcessEnv; cwd?: string}): ExecProcess {
  // Its own process group, so kill() also ends what a shell command started.
  const child = spawn(command, args, {...options, detached: true, stdio: ['pipe', 'pipe', 'pipe']})
  return {child, resize: () => undefined, kill: () => killGroup(child)}
}

/** Runs `argv` on a fresh pseudo-terminal of the asked size, under `script` (stdout carries everything). */
function underTerminal(
  argv: readonly string[],
  options: {env: NodeJS.ProcessEnv; cwd?: string},
  size: ExecOptions,
): ExecProcess {
  // The size is set on the new terminal before the command starts, so it never reads a 0×0 window.
  const stty = size.cols && size.rows ? `stty cols ${size.cols} rows ${size.rows} 2>/dev/null; ` : ''
  const line = `${stty}exec ${argv.map(shellWord).join(' ')}`
  const child = spawn('script', ['-qfec', line, '/dev/null'], {
    ...options,
    env: {...options.env, SHELL: '/bin/sh'},
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let terminal: string | null = null
  const resize = (cols: number, rows: number) => {
    terminal ??= terminalOf(child.pid)
    if (terminal) execFile('stty', ['-F', terminal, 'cols', String(cols), 'rows', String(rows)], () => undefined)
  }
  return {child, resize, kill: () => killGroup(child)}
}

/** The pseudo-terminal `script` (process `pid`) made: its child's stdin. */
function terminalOf(pid: number | undefined): string | null {
  if (pid === undefined) return null
  try {
    const [child] = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)
    const path = child ? readlinkSync(`/proc/${child}/fd/0`) : ''
    return path.startsWith('/dev/pts/') ? path : null
  } catch {
    return null
  }
}

/** The folder and environment of a process, from /proc; null when it is gone or not ours to read. */
function processPlace(pid: number): {cwd: string; env: NodeJS.ProcessEnv} | null {
  try {
    const env: NodeJS.ProcessEnv = {}
    for (const pair of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
      const eq = pair.indexOf('=')
      if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1)
    }
    return {cwd: readlinkSync(`/proc/${pid}/cwd`), env}
  } catch {
    return null
  }
}

function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
  } catch {
    // The group has ended already.
  }
}

/** A word quoted for /bin/sh. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}
