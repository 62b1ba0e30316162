/**
 * One `/exec` session (exec-protocol.ts) or `/terminal` session (terminal-protocol.ts) on a node API's WebSocket:
 * sends the request, hands each output frame to the caller by stream, carries stdin, end of stdin and window size,
 * and resolves with the command's exit code and how the socket closed.
 */
import {StringDecoder} from 'node:string_decoder'

import WebSocket from 'ws'

import {isLoopbackHost, loopbackLookup} from '../http/client.js'
import {EXEC_PATH, type ExecBody, type NodeControl, parseControl, STREAM} from './exec-protocol.js'
import {socketUrl} from './protocol.js'
import {TERMINAL_PATH, type TerminalBody} from './terminal-protocol.js'

const HANDSHAKE_TIMEOUT_MS = 10_000
/** Bytes of stdin per frame: a JSON-escaped piece (6 bytes per control character at worst) stays under 64 KiB. */
const STDIN_PIECE_BYTES = 8 * 1024

/** How a session ended: the command's exit code when the node sent one, and the socket's close. */
export interface ExecEnd {
  exitCode: number | null
  /** The node said the command ended (`/terminal` may give no code, as when a signal ended the shell). */
  exited: boolean
  code: number
  reason: string
  /** The node's error frame, or why the connection failed or broke. */
  error?: string
}

/** An open session. */
export interface ExecSession {
  ended: Promise<ExecEnd>
  stdin(data: Buffer): void
  stdinEnd(): void
  resize(cols: number, rows: number): void
  /** Bytes sent to the socket and not yet on the wire: a caller pauses its input while this is high. */
  buffered(): number
  close(): void
}

/** Opens an `/exec` session at `apiUrl` (the node's API base URL); `output` gets each chunk by stream. */
export function openExec(
  apiUrl: string,
  request: {header: string; body: ExecBody},
  output: (stream: 'stdout' | 'stderr', data: Buffer) => void,
): ExecSession {
  return openSession(socketUrl(apiUrl), {path: EXEC_PATH, ...request}, 'exec', output)
}

/**
 * Opens the network's `/terminal` at `apiUrl` with a signed grant (terminal-protocol.ts): a shell whose output is
 * one stream, and whose stdin travels as text.
 */
export function openTerminal(
  apiUrl: string,
  body: TerminalBody,
  output: (stream: 'stdout' | 'stderr', data: Buffer) => void,
): ExecSession {
  return openSession(`${socketUrl(apiUrl)}${TERMINAL_PATH}`, {path: TERMINAL_PATH, body}, 'terminal', output)
}

function openSession(
  url: string,
  request: object,
  route: 'exec' | 'terminal',
  output: (stream: 'stdout' | 'stderr', data: Buffer) => void,
): ExecSession {
  const loopback = isLoopbackHost(new URL(url).hostname)
  const socket = new WebSocket(url, {
    handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    maxPayload: 16 * 1024 * 1024,
    ...(loopback ? {lookup: loopbackLookup} : {}),
  })
  // What the caller sends before the socket opens goes after the request, in order.
  const pending: (Buffer | string)[] = []
  let pendingBytes = 0
  const send = (data: Buffer | string) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(data)
    else if (socket.readyState === WebSocket.CONNECTING) {
      pending.push(data)
      pendingBytes += data.length
    }
  }
  const decoder = new StringDecoder('utf8')
  let exitCode: number | null = null
  let exited = false
  let error: string | undefined
  const ended = new Promise<ExecEnd>((resolve) => {
    socket.on('open', () => {
      socket.send(JSON.stringify(request))
      for (const data of pending.splice(0)) socket.send(data)
      pendingBytes = 0
    })
    socket.on('message', (raw, binary) => {
      const data = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw as Buffer)
      if (binary && route === 'terminal') return output('stdout', data)
      if (binary) {
        if (data[0] === STREAM.stdout) output('stdout', data.subarray(1))
        else if (data[0] === STREAM.stderr) output('stderr', data.subarray(1))
        return
      }
      const control = parseControl<NodeControl>(data.toString('utf8'))
      // The network's web client shows a text frame that is not JSON as output; so does gpunet.
      if (!control && route === 'terminal') return output('stdout', data)
      if (control?.type === 'exit') {
        exited = true
        exitCode = Number.isInteger(control.code) ? control.code : null
      } else if (control?.type === 'error' && typeof control.message === 'string') error = control.message
    })
    socket.on('error', (e: Error) => {
      error ??= e.message
    })
    socket.on('close', (code, reason) => resolve({exitCode, exited, code, reason: reason.toString(), error}))
  })
  return {
    ended,
    // `/terminal` takes text: a decoder keeps a character split between two reads whole.
    // In pieces well under the node's 64 KiB request frames, which a piece as JSON text (escaped) must fit too.
    stdin: (data) => {
      for (let at = 0; at < data.length; at += STDIN_PIECE_BYTES) {
        const piece = data.subarray(at, at + STDIN_PIECE_BYTES)
        send(route === 'exec' ? piece : JSON.stringify({type: 'stdin', data: decoder.write(piece)}))
      }
    },
    stdinEnd: () => send(JSON.stringify({type: 'stdin-end'})),
    resize: (cols, rows) => send(JSON.stringify({type: 'resize', cols, rows})),
    buffered: () => socket.bufferedAmount + pendingBytes,
    close: () => {
      if (socket.readyState === WebSocket.CONNECTING) socket.terminate()
      else socket.close(1000)
    },
  }
}
