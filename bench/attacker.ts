/**
 * The attacking client of bench/attacks.bench.ts, in a process of its own so that building and sending an attack
 * never shows in the localnet's event loop. Takes one JSON argument describing the attack; exits once it is sent
 * and answered (or refused).
 */
import {once} from 'node:events'
import {request} from 'node:http'

import WebSocket from 'ws'

/** What to send. */
export type Attack =
  | {kind: 'idle'; ms: number}
  | {kind: 'socket'; url: string; host: string; message: unknown; count?: number; holdMs?: number}
  | {kind: 'http'; url: string; host?: string; method: string; headers?: Record<string, string>; body: Body}

/** A body built here: text as is, a JSON value, a multipart bomb of `parts` parts, or one file of `bytes`. */
type Body = {text: string} | {json: unknown} | {parts: number} | {file: number} | null

const LONG = (n: number) => 'z'.repeat(n)

function bodyOf(body: Body): {bytes: Buffer; type?: string} {
  if (body === null) return {bytes: Buffer.alloc(0)}
  if ('text' in body) return {bytes: Buffer.from(body.text)}
  if ('json' in body) {
    // `@LONG:n@` stands for n base58 characters, so the parent's argument stays small.
    const text = JSON.stringify(body.json).replace(/@LONG:(\d+)@/g, (_m, n: string) => LONG(Number(n)))
    return {bytes: Buffer.from(text), type: 'application/json'}
  }
  const type = 'multipart/form-data; boundary=B'
  if ('parts' in body) {
    const parts = Array.from(
      {length: body.parts},
      (_, i) => `--B\r\ncontent-disposition: form-data; name="file"; filename="f${i}"\r\n\r\n${i}\r\n`,
    )
    return {bytes: Buffer.from(`${parts.join('')}--B--\r\n`), type}
  }
  const head = Buffer.from('--B\r\ncontent-disposition: form-data; name="file"; filename="big"\r\n\r\n')
  const content = Buffer.alloc(body.file)
  for (let i = 0; i < content.length; i += 4096) content[i] = i & 0xff
  return {bytes: Buffer.concat([head, content, Buffer.from('\r\n--B--\r\n')]), type}
}

async function socket(attack: Extract<Attack, {kind: 'socket'}>): Promise<void> {
  const text = JSON.stringify(attack.message).replace(/@LONG:(\d+)@/g, (_m, n: string) => LONG(Number(n)))
  const sockets: WebSocket[] = []
  for (let i = 0; i < (attack.count ?? 1); i++) {
    const ws = new WebSocket(attack.url, {headers: {host: attack.host}})
    ws.on('error', () => {})
    const opened = await Promise.race([
      once(ws, 'open').then(() => true),
      once(ws, 'unexpected-response').then(() => false),
      once(ws, 'close').then(() => false),
    ])
    if (!opened) continue
    sockets.push(ws)
    if (attack.message !== null) ws.send(text)
  }
  await new Promise((resolve) => setTimeout(resolve, attack.holdMs ?? 1500))
  for (const ws of sockets) ws.terminate()
}

async function http(attack: Extract<Attack, {kind: 'http'}>): Promise<void> {
  const {bytes, type} = bodyOf(attack.body)
  const url = new URL(attack.url)
  const headers: Record<string, string> = {...attack.headers, 'content-length': String(bytes.length)}
  for (const [name, value] of Object.entries(headers))
    headers[name] = value.replace(/@LONG:(\d+)@/g, (_m, n: string) => LONG(Number(n)))
  if (type) headers['content-type'] = type
  if (attack.host) headers.host = attack.host
  await new Promise<void>((resolve) => {
    const req = request(
      {host: url.hostname, port: url.port, path: url.pathname, method: attack.method, headers},
      (res) => {
        res.resume()
        res.on('end', () => resolve())
        res.on('error', () => resolve())
      },
    )
    req.on('error', () => resolve())
    req.end(bytes)
  })
}

const attack = JSON.parse(process.argv[2]!) as Attack
if (attack.kind === 'idle') await new Promise((resolve) => setTimeout(resolve, attack.ms))
else if (attack.kind === 'socket') await socket(attack)
else await http(attack)
process.exit(0)
