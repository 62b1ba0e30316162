import {type ChildProcess, spawn} from 'node:child_process'
import {createServer} from 'node:net'
import {constants} from 'node:os'

import {type CollectedLog, LogCollector, type LineListener, type LogLimits} from '../output.js'
import type {OperationResult, RuntimeKind} from '../../results/operation-result.js'

/** How a child process ended, with its output as capped, masked lines. */
export interface ChildOutcome {
  exitCode: number
  startedAt: string
  endedAt: string
  log: CollectedLog
}

/** A started child process and its outcome once it has ended and its outputs are drained. */
export interface ChildRun {
  child: ChildProcess
  outcome: Promise<ChildOutcome>
}

/** Exit code reported when the program itself could not be started (as a shell reports it). */
const NOT_STARTED = 127

/**
 * Spawns `command` with an argument array (never through a shell) and collects its outputs as lines in bounded
 * memory, masking the `redact` values.
 */
export function spawnCollected(
  command: string,
  args: readonly string[],
  options: {
    env: NodeJS.ProcessEnv
    cwd?: string
    detached?: boolean
    logLimits?: LogLimits
    redact?: Readonly<Record<string, string>>
    onLine?: LineListener
  },
): ChildRun {
  const output = new LogCollector(options.logLimits, options.redact, options.onLine)
  const startedAt = new Date().toISOString()
  const {env, cwd, detached} = options
  const child = spawn(command, args, {env, cwd, detached, stdio: ['ignore', 'pipe', 'pipe']})
  child.stdout?.on('data', (chunk: Buffer) => output.push('stdout', chunk))
  child.stderr?.on('data', (chunk: Buffer) => output.push('stderr', chunk))
  const outcome = new Promise<ChildOutcome>((resolve) => {
    const finish = (exitCode: number) =>
      resolve({
        exitCode,
        startedAt,
        endedAt: new Date().toISOString(),
        log: output.result(),
      })
    child.on('error', (error: NodeJS.ErrnoException) => {
      output.push('stderr', Buffer.from(`${command} could not be started: ${error.code ?? error.message}\n`))
      finish(NOT_STARTED)
    })
    child.on('close', (code, signal) => {
      if (code !== null || signal !== null) finish(code ?? 128 + (constants.signals[signal as NodeJS.Signals] ?? 0))
    })
  })
  return {child, outcome}
}

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}

/** The result of an operation from how its process ended and what the runtime knows about the run. */
export function operationResult(
  operationId: string,
  runtime: RuntimeKind,
  outcome: ChildOutcome,
  run: {stopped: boolean; isolated: boolean; notices: string[]; runtimeFailure?: string},
): OperationResult {
  const {exitCode, startedAt, endedAt, log} = outcome
  const text = (type: 'stdout' | 'stderr') =>
    log.logs
      .filter((entry) => entry.type === type)
      .map((entry) => entry.log)
      .join('')
  return {
    operationId,
    runtime,
    exitCode,
    startedAt,
    endedAt,
    logs: log.logs,
    droppedLines: log.droppedLines,
    droppedBytes: log.droppedBytes,
    stdout: text('stdout'),
    stderr: text('stderr'),
    ...run,
  }
}
