/**
 * One `/exec` session on a node API's WebSocket (framing in exec-protocol.ts): sends the request, hands each output
 * frame to the caller by stream, carries stdin, end of stdin and window size, and resolves with the command's exit
 * code and how the socket closed.
 */
import WebSocket from 'ws'

import {isLoopbackHost, loopbackLookup} from '../http.js'
import {EXEC_PATH, type ExecBody, type NodeControl, parseControl, STREAM} from './exec-protocol.js'
import {socketUrl} from './protocol.js'

const HANDSHAKE_TIMEOUT_MS = 10_000

/** How a session ended: the command's exit code when the node sent one, and the socket's close. */
export interface ExecEnd {
  exitCode: number | null
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
  const url = socketUrl(apiUrl)
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
  let exitCode: number | null = null
  let error: string | undefined
  const ended = new Promise<ExecEnd>((resolve) => {
    socket.on('open', () => {
      socket.send(JSON.stringify({path: EXEC_PATH, ...request}))
      for (const data of pending.splice(0)) socket.send(data)
      pendingBytes = 0
    })
    socket.on('message', (raw, binary) => {
      const data = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw as Buffer)
      if (binary) {
        if (data[0] === STREAM.stdout) output('stdout', data.subarray(1))
        else if (data[0] === STREAM.stderr) output('stderr', data.subarray(1))
        return
      }
      const control = parseControl<NodeControl>(data.toString('utf8'))
      if (control?.type === 'exit' && Number.isInteger(control.code)) exitCode = control.code
      else if (control?.type === 'error' && typeof control.message === 'string') error = control.message
    })
    socket.on('error', (e: Error) => {
      error ??= e.message
    })
    socket.on('close', (code, reason) => resolve({exitCode, code, reason: reason.toString(), error}))
  })
  return {
    ended,
    stdin: (data) => send(data),
    stdinEnd: () => send(JSON.stringify({type: 'stdin-end'})),
    resize: (cols, rows) => send(JSON.stringify({type: 'resize', cols, rows})),
    buffered: () => socket.bufferedAmount + pendingBytes,
    close: () => {
      if (socket.readyState === WebSocket.CONNECTING) socket.terminate()
      else socket.close(1000)
    },
  }
}
