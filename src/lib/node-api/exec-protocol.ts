/**
 * gpunet's `/exec` framing on the node API's WebSocket, shared by `job exec` / `job shell` and the localnet's node.
 * The network's nodes serve a `/terminal` route instead (node.openapi.json, `x-websocket`): an interactive shell
 * whose stdout and stderr arrive mixed, with no command to run and no end of stdin, so a command's streams and exit
 * code cannot be carried on it. `/exec` is gpunet's own: only the localnet's node serves it (docs/exec.md).
 *
 * - The first frame is the request, as for `/flog`: `{path: "/exec", header, body: ExecBody}`, the header signed
 *   by the job's poster for the action `exec`.
 * - Client → node: binary frames are stdin bytes; text frames are `{"type":"stdin-end"}` (close stdin) and
 *   `{"type":"resize","cols":N,"rows":N}` (a TTY session only).
 * - Node → client: binary frames are output, their first byte the stream (1 stdout, 2 stderr; a TTY has only 1);
 *   text frames are `{"type":"exit","code":N}` (then the node closes with 1000) and `{"type":"error","message"}`.
 */

/** The socket path of an exec session. */
export const EXEC_PATH = '/exec'

/** What a client asks for in the first frame. */
export interface ExecBody {
  jobAddress: string
  /** The operation to run in; the job's only running operation when absent. */
  opId?: string
  /** The command and its arguments, run without a shell. */
  cmd: string[]
  /** A pseudo-terminal: one output stream, window size, line discipline (Ctrl+D ends a shell). */
  tty?: boolean
  cols?: number
  rows?: number
}

/** The first byte of an output frame. */
export const STREAM = {stdout: 1, stderr: 2} as const

/** A control frame from the client. */
export type ClientControl = {type: 'stdin-end'} | {type: 'resize'; cols: number; rows: number}

/** A control frame from the node. */
export type NodeControl = {type: 'exit'; code: number} | {type: 'error'; message: string}

/** Most words and bytes a command may have (it travels in one request frame, capped by the node). */
export const MAX_EXEC_ARGS = 256
export const MAX_EXEC_ARG_BYTES = 16 * 1024

/** A terminal's columns and rows are whole numbers in this range. */
export function validSize(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 1000
}

/** The body's fields checked, or the reason it is refused. */
export function checkExecBody(body: unknown): ExecBody | {reason: string} {
  const b = body as Partial<Record<keyof ExecBody, unknown>> | null
  if (typeof b !== 'object' || b === null) return {reason: 'Expected a body'}
  const {cmd, opId, tty, cols, rows} = b
  if (!Array.isArray(cmd) || cmd.length === 0 || cmd.length > MAX_EXEC_ARGS)
    return {reason: `Expected cmd to be 1 to ${MAX_EXEC_ARGS} words`}
  if (!cmd.every((w) => typeof w === 'string' && !w.includes('\0')))
    return {reason: 'Expected cmd words to be strings without NUL'}
  if (cmd.reduce((n, w: string) => n + Buffer.byteLength(w), 0) > MAX_EXEC_ARG_BYTES)
    return {reason: `The command is longer than ${MAX_EXEC_ARG_BYTES} bytes`}
  if (opId !== undefined && (typeof opId !== 'string' || opId === '' || opId.length > 256))
    return {reason: 'Expected opId to be an operation id'}
  if (tty !== undefined && typeof tty !== 'boolean') return {reason: 'Expected tty to be true or false'}
  if ((cols !== undefined && !validSize(cols)) || (rows !== undefined && !validSize(rows)))
    return {reason: 'Expected cols and rows to be whole numbers from 1 to 1000'}
  return {
    jobAddress: String(b.jobAddress),
    cmd: cmd as string[],
    ...(opId === undefined ? {} : {opId: opId as string}),
    tty: tty === true,
    ...(cols === undefined ? {} : {cols: cols as number}),
    ...(rows === undefined ? {} : {rows: rows as number}),
  }
}

/** Parses a control frame; null for anything else. */
export function parseControl<T extends {type: string}>(text: string): T | null {
  try {
    const value = JSON.parse(text) as {type?: unknown}
    return typeof value === 'object' && value !== null && typeof value.type === 'string' ? (value as T) : null
  } catch {
    return null
  }
}
