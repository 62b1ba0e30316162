/**
 * A streaming service for the gateway's stream tests and benchmark: each answer sends its first part, then waits
 * on a gate the test opens (or on a fixed per-token delay), so that a client holding the first part before the gate
 * opens proves nothing between them buffered it. Server-sent events, NDJSON (chunked), a long answer of a fixed
 * length, a head sent alone, and a WebSocket.
 */
import {once} from 'node:events'
import {createServer, type IncomingMessage, request, type Server} from 'node:http'
import {request as httpsRequest} from 'node:https'
import type {AddressInfo} from 'node:net'
import {setTimeout as sleep} from 'node:timers/promises'

import {WebSocketServer} from 'ws'

/** What each path streams. */
export const STREAM_PATHS = ['/sse', '/ndjson', '/long', '/head'] as const
export type StreamPath = (typeof STREAM_PATHS)[number]

/** The first part of `/long`: more than any socket buffer, so it cannot go out as one write with the rest. */
export const LONG_FIRST_BYTES = 512 * 1024

/** The service's first part of each stream, and what it ends with once its gate opens. */
export function streamParts(path: StreamPath, name: string): {first: string; last: string; type: string} {
  switch (path) {
    case '/sse':
      return {
        first: `data: {"from":"${name}","token":"first"}\n\n`,
        last: 'data: [DONE]\n\n',
        type: 'text/event-stream',
      }
    case '/ndjson':
      return {
        first: `{"from":"${name}","response":"first","done":false}\n`,
        last: `{"from":"${name}","response":"","done":true}\n`,
        type: 'application/x-ndjson',
      }
    case '/long':
      return {first: name.padEnd(LONG_FIRST_BYTES, '.'), last: 'end', type: 'text/plain'}
    case '/head':
      return {first: '', last: `${name} at last`, type: 'text/plain'}
  }
}

export interface StreamingService {
  server: Server
  port: number
  /** Streams the service is holding at its gate now. */
  readonly waiting: number
  /** Opens the gate: every stream waiting sends its end. */
  release(): void
  close(): Promise<void>
}

/**
 * Starts the service on 127.0.0.1. With `tokenDelayMs`, `/ndjson?tokens=N` sends N tokens that far apart instead
 * of waiting on the gate (the benchmark's streams).
 */
export async function streamingService(name: string): Promise<StreamingService> {
  let gate = opening()
  let waiting = 0
  const held = async () => {
    waiting++
    await gate.promise
    waiting--
  }
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://service')
    const tokens = Number(url.searchParams.get('tokens') ?? '0')
    if (url.pathname === '/ndjson' && tokens > 0) {
      void (async () => {
        res.writeHead(200, {'content-type': 'application/x-ndjson'})
        const delay = Number(url.searchParams.get('delay') ?? '0')
        for (let i = 0; i < tokens && !res.destroyed; i++) {
          res.write(`{"from":"${name}","response":"t${i}","done":false}\n`)
          await sleep(delay)
        }
        res.end('{"response":"","done":true}\n')
      })()
      return
    }
    const path = url.pathname as StreamPath
    if (!STREAM_PATHS.includes(path)) return void res.writeHead(404).end()
    const {first, last, type} = streamParts(path, name)
    const length = path === '/long' ? {'content-length': String(Buffer.byteLength(first + last))} : {}
    res.writeHead(200, {'content-type': type, ...length})
    // The head alone: Node sends it with the first byte of the body otherwise.
    if (path === '/head') res.flushHeaders()
    else res.write(first)
    void held().then(() => res.end(last))
  })
  const wss = new WebSocketServer({server})
  wss.on('connection', (ws) => {
    ws.send(`first from ${name}`)
    void held().then(() => ws.readyState === ws.OPEN && ws.send(`last from ${name}`))
    ws.on('message', (data) => ws.send(`echo ${String(data)}`))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    server,
    port: (server.address() as AddressInfo).port,
    get waiting() {
      return waiting
    },
    release() {
      gate.open()
      gate = opening()
    },
    async close() {
      gate.open()
      for (const ws of wss.clients) ws.terminate()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** A gate: its promise resolves once it is opened (Promise.withResolvers is Node 22's). */
function opening(): {promise: Promise<void>; open: () => void} {
  let open = () => {}
  const promise = new Promise<void>((resolve) => (open = resolve))
  return {promise, open}
}

/** One stream read by a client: its head, then its body as it comes. */
export interface OpenStream {
  status: number
  type: string
  /** The body received so far. */
  readonly body: string
  /**
   * Resolves once the body received holds `text` (or passes `text` when it is a test); rejects when the stream ends
   * or is cut without it.
   */
  until(text: string | ((body: string) => boolean)): Promise<void>
  /** The whole body once it ended; rejects when the stream was cut before its end. */
  done: Promise<string>
}

/**
 * Opens `path` through the gateway on 127.0.0.1:`port` with the Host header `host`, over https when `ca` (the one
 * authority trusted) is given; resolves on the head.
 */
export function openStream(port: number, host: string, path: string, ca?: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const options = {host: '127.0.0.1', port, path, headers: {host: `${host}:${port}`}}
    const send = ca === undefined ? request : httpsRequest
    const tls = ca === undefined ? {} : {ca, servername: host, agent: false as const}
    const req = send({...options, ...tls}, (res: IncomingMessage) => {
      let body = ''
      const waiters: {test: (body: string) => boolean; resolve: () => void}[] = []
      const done = new Promise<string>((resolveDone, rejectDone) => {
        res.on('end', () => resolveDone(body))
        res.on('error', rejectDone)
        res.on('aborted', () => rejectDone(new Error('the stream was cut')))
        res.on('close', () => res.complete || rejectDone(new Error('the stream was cut')))
      })
      done.catch(() => {})
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        body += chunk
        for (const waiter of waiters.filter((w) => w.test(body))) {
          waiters.splice(waiters.indexOf(waiter), 1)
          waiter.resolve()
        }
      })
      resolve({
        status: res.statusCode ?? 0,
        type: String(res.headers['content-type']),
        get body() {
          return body
        },
        until(text) {
          const test = typeof text === 'string' ? (got: string) => got.includes(text) : text
          if (test(body)) return Promise.resolve()
          return Promise.race([
            new Promise<void>((r) => waiters.push({test, resolve: r})),
            done.then(() => Promise.reject(new Error(`the stream ended without ${String(text).slice(0, 80)}`))),
          ])
        },
        done,
      })
    })
    req.on('error', reject)
    req.end()
  })
}
