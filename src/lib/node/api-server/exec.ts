/**
 * The localnet node API's `/exec` session (framing in node-api/exec-protocol.ts) and the network's `/terminal`
 * (node-api/terminal-protocol.ts): checks the poster's `exec` header or terminal grant, finds the running
 * operation, starts the command (a shell for `/terminal`) in it and carries stdin, output, window size and the
 * exit code over the socket. Output is bounded: past EXEC_BACKLOG_BYTES unsent the command's output is
 * paused (it blocks, as on a full pipe), and a client that reads nothing for the stall time is closed (1013) and
 * the command ended.
 */
import {constants} from 'node:os'

import type {RawData, WebSocket} from 'ws'

import {hasBase58Shape} from '../../text/base58-text.js'
import {GpunetError} from '../../errors.js'
import {checkExecBody, type ClientControl, parseControl, STREAM, validSize} from '../../node-api/exec-protocol.js'
import {CLOSE} from '../../node-api/protocol.js'
import {safeTerminalOp} from '../../node-api/terminal-protocol.js'
import type {ExecChild, ExecProcess} from '../runtime/exec.js'
import type {OperationAccess} from './access.js'

/** Commands running at once in one job. */
export const MAX_EXEC_SESSIONS_PER_JOB = 8
/** Output bytes waiting to be sent before the command's output is paused. */
export const EXEC_BACKLOG_BYTES = 1024 * 1024
/** How long a paused session waits for its client to read before it is closed. */
export const EXEC_STALL_MS = 30_000
/** How often a paused session looks whether its client has read. */
const DRAIN_CHECK_MS = 25

/** What a session needs of the node API. */
export interface ExecAccess {
  /** Checks the header for the action `exec` on the job: the close code and reason when refused. */
  authorize(job: string, header: unknown): Promise<{ok: true} | {ok: false; code: number; reason: string}>
  /** Checks a `/terminal` grant for the job. */
  authorizeTerminal(
    job: string,
    body: {message?: unknown; signature?: unknown; op?: unknown},
  ): Promise<{ok: true} | {ok: false; code: number; reason: string}>
  operations(job: string): ReadonlyMap<string, OperationAccess> | null
  stallMs: number
}

/** What `/terminal` runs: bash where the image has it, else sh. */
export const TERMINAL_SHELL = ['/bin/sh', '-c', 'if command -v bash >/dev/null 2>&1; then exec bash; else exec sh; fi']

/** Which of the two routes a session speaks: they differ in their request and frames. */
export type SessionRoute = 'exec' | 'terminal'

/** A session's request once checked: the command, where, and how. */
interface SessionRequest {
  opId?: string
  cmd: string[]
  tty: boolean
  cols?: number
  rows?: number
}

const sessions = new Map<string, number>()

/**
 * Takes over a socket whose first frame asked for `/exec`: returns the handler of its later frames (stdin and
 * control frames that come before the command starts are queued).
 */
export function openExec(
  socket: WebSocket,
  request: {header?: unknown; body?: unknown},
  access: ExecAccess,
  route: SessionRoute = 'exec',
): (raw: RawData, binary: boolean) => void {
  const queued: {raw: RawData; binary: boolean}[] = []
  let handle: ((raw: RawData, binary: boolean) => void) | null = null
  void start(socket, request, access, route).then(
    (session) => {
      if (!session) return
      handle = session
      for (const {raw, binary} of queued.splice(0)) session(raw, binary)
    },
    () => socket.close(1011, 'Internal Server Error'),
  )
  return (raw, binary) => {
    if (handle) handle(raw, binary)
    // A client may send stdin before the command starts; the request frame's cap bounds each, and this many.
    else if (queued.length < 64) queued.push({raw, binary})
    else socket.close(CLOSE.TRY_AGAIN, 'Too many frames before the command started')
  }
}

/** Closes with a reason cut to the 123 bytes a close frame holds. */
function closeWith(socket: WebSocket, code: number, reason: string): void {
  let cut = reason
  while (Buffer.byteLength(cut) > 123) cut = cut.slice(0, -1)
  socket.close(code, cut)
}

async function start(
  socket: WebSocket,
  request: {header?: unknown; body?: unknown},
  access: ExecAccess,
  route: SessionRoute,
): Promise<((raw: RawData, binary: boolean) => void) | null> {
  const job = (request.body as {jobAddress?: unknown} | undefined)?.jobAddress
  if (typeof job !== 'string' || !hasBase58Shape(job, 'key')) {
    closeWith(socket, CLOSE.INVALID_BODY, 'Expected body to contain jobAddress.')
    return null
  }
  const checked = route === 'exec' ? checkExecBody(request.body) : checkTerminalBody(request.body)
  if ('reason' in checked) {
    closeWith(socket, CLOSE.INVALID_BODY, checked.reason)
    return null
  }
  const body: SessionRequest = {...checked, tty: checked.tty === true}
  const verdict =
    route === 'exec'
      ? await access.authorize(job, request.header)
      : await access.authorizeTerminal(job, request.body as {message?: unknown; signature?: unknown; op?: unknown})
  if (!verdict.ok) {
    closeWith(socket, verdict.code, verdict.reason)
    return null
  }
  const op = pickOperation(access.operations(job), body)
  if ('reason' in op) {
    closeWith(socket, CLOSE.UNKNOWN_JOB, op.reason)
    return null
  }
  const running = sessions.get(job) ?? 0
  if (running >= MAX_EXEC_SESSIONS_PER_JOB) {
    closeWith(socket, CLOSE.TRY_AGAIN, `At most ${MAX_EXEC_SESSIONS_PER_JOB} commands run in one job at once`)
    return null
  }
  if (socket.readyState !== socket.OPEN) return null
  let proc: ExecProcess
  try {
    proc = op.access.exec(body.cmd, {tty: body.tty, cols: body.cols, rows: body.rows})
  } catch (error) {
    closeWith(socket, CLOSE.UNKNOWN_JOB, error instanceof GpunetError ? error.message : 'The command could not start')
    return null
  }
  sessions.set(job, running + 1)
  return run(socket, proc, body, route, access.stallMs, () => {
    const left = (sessions.get(job) ?? 1) - 1
    if (left > 0) sessions.set(job, left)
    else sessions.delete(job)
  })
}

/** A `/terminal` body's fields checked (its grant is checked apart): a shell, in the operation the grant names. */
function checkTerminalBody(body: unknown): SessionRequest | {reason: string} {
  const {op, cols, rows} = (body ?? {}) as {op?: unknown; cols?: unknown; rows?: unknown}
  if (op !== undefined && (typeof op !== 'string' || !safeTerminalOp(op)))
    return {reason: 'Expected op to be an operation id'}
  if ((cols !== undefined && !validSize(cols)) || (rows !== undefined && !validSize(rows)))
    return {reason: 'Expected cols and rows to be whole numbers from 1 to 1000'}
  return {
    ...(op === undefined ? {} : {opId: op as string}),
    cmd: TERMINAL_SHELL,
    tty: true,
    ...(cols === undefined ? {} : {cols: cols as number}),
    ...(rows === undefined ? {} : {rows: rows as number}),
  }
}

function pickOperation(
  ops: ReadonlyMap<string, OperationAccess> | null,
  body: SessionRequest,
): {access: OperationAccess} | {reason: string} {
  if (!ops) return {reason: 'This node runs no such job now'}
  if (body.opId !== undefined) {
    const access = ops.get(body.opId)
    return access ? {access} : {reason: `No operation "${body.opId.slice(0, 40)}" of the job runs now`}
  }
  const ids = [...ops.keys()]
  if (ids.length === 1) return {access: ops.get(ids[0]!)!}
  return {
    reason:
      ids.length === 0
        ? 'No operation of the job runs now'
        : `Several operations run (${ids.join(', ')}): choose one (--op)`,
  }
}

/** Carries one started command over the socket until it exits or the client goes. */
function run(
  socket: WebSocket,
  proc: ExecProcess,
  body: SessionRequest,
  route: SessionRoute,
  stallMs: number,
  release: () => void,
): (raw: RawData, binary: boolean) => void {
  const {child} = proc
  const outputs = [
    [child.stdout, STREAM.stdout],
    [child.stderr, STREAM.stderr],
  ] as const
  let exited = false
  let pausedAt: number | null = null
  let drainTimer: NodeJS.Timeout | undefined
  const finish = () => {
    clearInterval(drainTimer)
    release()
  }
  const checkDrain = () => {
    if (socket.bufferedAmount <= EXEC_BACKLOG_BYTES / 2) {
      pausedAt = null
      clearInterval(drainTimer)
      drainTimer = undefined
      for (const [stream] of outputs) stream?.resume()
    } else if (pausedAt !== null && Date.now() - pausedAt >= stallMs) {
      clearInterval(drainTimer)
      socket.close(CLOSE.TRY_AGAIN, `The client read nothing for ${Math.round(stallMs / 1000)} s`)
      // A client that reads nothing may not read a close frame either.
      setTimeout(() => socket.terminate(), 1000).unref()
    }
  }
  for (const [stream, id] of outputs) {
    stream?.on('data', (chunk: Buffer) => {
      if (socket.readyState !== socket.OPEN) return
      // `/exec` says which stream a chunk is from; `/terminal` has one stream, sent as it is.
      socket.send(route === 'exec' ? Buffer.concat([Buffer.of(id), chunk]) : chunk)
      if (socket.bufferedAmount > EXEC_BACKLOG_BYTES && pausedAt === null) {
        pausedAt = Date.now()
        for (const [s] of outputs) s?.pause()
        drainTimer = setInterval(checkDrain, DRAIN_CHECK_MS)
      }
    })
  }
  child.stdin?.on('error', () => undefined)
  child.on('error', (error: NodeJS.ErrnoException) => {
    exited = true
    finish()
    // What did start (a session podman broke off) must not outlive it.
    proc.kill()
    if (socket.readyState !== socket.OPEN) return
    socket.send(JSON.stringify({type: 'error', message: `The command could not start: ${error.code ?? error.message}`}))
    socket.close(1011, 'The command could not start')
  })
  child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
    if (exited) return
    exited = true
    finish()
    if (socket.readyState !== socket.OPEN) return
    const exitCode = code ?? 128 + (signal ? constants.signals[signal] : 0)
    socket.send(JSON.stringify({type: 'exit', code: exitCode}))
    socket.close(1000, 'The command exited')
  })
  socket.on('close', () => {
    if (exited) return
    proc.kill()
  })
  return (raw, binary) => {
    const data = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw as Buffer)
    if (binary) return writeStdin(socket, child, data)
    const control = parseControl<ClientControl | {type: 'stdin'; data: unknown}>(data.toString('utf8'))
    if (control?.type === 'stdin' && typeof control.data === 'string')
      return writeStdin(socket, child, Buffer.from(control.data, 'utf8'))
    if (control?.type === 'stdin-end') child.stdin?.end()
    else if (control?.type === 'resize' && body.tty && validSize(control.cols) && validSize(control.rows))
      proc.resize(control.cols, control.rows)
  }
}

/** Writes stdin, pausing the socket while the command does not read (the client then blocks in turn). */
function writeStdin(socket: WebSocket, child: ExecChild, data: Buffer): void {
  const stdin = child.stdin
  if (!stdin || stdin.writableEnded || stdin.destroyed) return
  if (!stdin.write(data)) {
    socket.pause()
    const resume = () => {
      stdin.off('drain', resume).off('close', resume)
      socket.resume()
    }
    stdin.on('drain', resume).on('close', resume)
  }
}
