/**
 * One subscription to a node API's WebSocket (`/flog`, `/log` or `/status`): connects, sends the request, hands
 * each decoded frame to the caller and resolves with how the socket closed. Loopback names (`*.localhost`) resolve
 * to 127.0.0.1 as in the HTTP client; reconnecting is the caller's affair.
 */
import WebSocket from 'ws'

import {isLoopbackHost, loopbackLookup} from '../http.js'
import {decodeFrame, type SocketRequest, socketUrl} from './protocol.js'

/** How long the WebSocket handshake may take. */
const HANDSHAKE_TIMEOUT_MS = 10_000

/** How a subscription ended: the close code and reason, or the error that broke the connection. */
export interface SubscriptionEnd {
  code: number
  reason: string
  /** Why it could not connect or broke (no close frame), if so. */
  error?: string
  /** How many frames it received. */
  frames: number
}

/** An open subscription: close it to end it (resolves `ended`). */
export interface Subscription {
  ended: Promise<SubscriptionEnd>
  close(): void
}

/** Subscribes at `apiUrl` (the node's API base URL, http or https) and calls `onFrame` for each frame. */
export function subscribe(
  apiUrl: string,
  request: SocketRequest,
  onFrame: (path: string, data: unknown) => void,
): Subscription {
  const url = socketUrl(apiUrl)
  const loopback = isLoopbackHost(new URL(url).hostname)
  const socket = new WebSocket(url, {
    handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    maxPayload: 16 * 1024 * 1024,
    ...(loopback ? {lookup: loopbackLookup} : {}),
  })
  let frames = 0
  let error: string | undefined
  const ended = new Promise<SubscriptionEnd>((resolve) => {
    socket.on('open', () => socket.send(JSON.stringify(request)))
    socket.on('message', (raw) => {
      const frame = decodeFrame(raw.toString())
      if (!frame) return
      frames++
      onFrame(frame.path, frame.data)
    })
    socket.on('error', (e: Error) => {
      error ??= e.message
    })
    socket.on('close', (code, reason) => resolve({code, reason: reason.toString(), error, frames}))
  })
  return {
    ended,
    close: () => {
      if (socket.readyState === WebSocket.CONNECTING) socket.terminate()
      else socket.close(1000)
    },
  }
}
