/**
 * One subscription to a node API's WebSocket (`/flog`, `/log` or `/status`): connects, sends the request, hands
 * each decoded frame to the caller and resolves with how the socket closed. Loopback names (`*.localhost`) resolve
 * to 127.0.0.1 as in the HTTP client; reconnecting is the caller's affair. A node is a stranger: a frame that is no
 * frame, nests past the limit or makes the caller throw is handed to `onBadFrame` and skipped, never thrown.
 */
import WebSocket from 'ws'

import {isLoopbackHost, loopbackLookup} from '../http/client.js'
import {MAX_NESTING_DEPTH, tooDeepAt} from '../text/nesting.js'
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

/** An open subscription: close it to end it (resolves `ended`); pause it while the reader of its frames is full. */
export interface Subscription {
  ended: Promise<SubscriptionEnd>
  close(): void
  /** Drops the connection without the closing handshake, which a node may take its 30 s over: nobody waits for it. */
  terminate(): void
  /** Stops reading the socket (the node's sends then wait in TCP's buffers), until `resume`. */
  pause(): void
  resume(): void
}

/** A frame as the client reads it, or why it is skipped. */
export type ReadFrame = {path: string; data: unknown} | {skip: string}

/** Reads one frame's text: `{path, data: "<JSON>"}` whose data nests at most MAX_NESTING_DEPTH deep. */
export function readFrame(text: string): ReadFrame {
  const frame = decodeFrame(text)
  if (!frame) return {skip: 'it is not a frame of the node API ({"path", "data": "<JSON>"})'}
  if (tooDeepAt(frame.data) !== null) return {skip: `its entry nests more than ${MAX_NESTING_DEPTH} deep`}
  return frame
}

/**
 * Subscribes at `apiUrl` (the node's API base URL, http or https) and calls `onFrame` for each frame; a frame
 * that cannot be read, or that `onFrame` throws on, goes to `onBadFrame` with why, and the subscription goes on.
 */
export function subscribe(
  apiUrl: string,
  request: SocketRequest,
  onFrame: (path: string, data: unknown) => void,
  onBadFrame: (why: string) => void = () => {},
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
    // An exception here would escape into ws's event emitter and end the process: none may leave.
    socket.on('message', (raw) => {
      try {
        const frame = readFrame(raw.toString())
        if ('skip' in frame) return onBadFrame(frame.skip)
        frames++
        onFrame(frame.path, frame.data)
      } catch (error) {
        try {
          onBadFrame(`it could not be read (${error instanceof Error ? error.message : String(error)})`)
        } catch {
          // The notice itself failed (its output is gone): the frame is skipped all the same.
        }
      }
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
    terminate: () => socket.terminate(),
    pause: () => socket.pause(),
    resume: () => socket.resume(),
  }
}
