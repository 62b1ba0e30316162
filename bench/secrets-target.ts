/**
 * A server under load for bench/secrets.bench.ts, in a process of its own so the load generator does not share
 * its event loop: `bare` (node:http answering a fixed JSON body), `durable` (node:http writing each request's
 * body to a file in DIR and answering once an fdatasync holds it: the least a durable write can cost here), or
 * `service` (the secrets service on SQLite in DIR, login limits raised), from this checkout or from the checkout
 * SOURCE (a baseline). Prints its URL on stdout; stops on SIGTERM. `--cpu-prof` on the node command line
 * profiles it.
 */
import {randomBytes} from 'node:crypto'
import {closeSync, fdatasyncSync, openSync, writeSync} from 'node:fs'
import {createServer, type Server as HttpServer, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import type * as Server from '../src/lib/secrets/service/server.js'
import type * as Sqlite from '../src/lib/secrets/service/sqlite.js'

const [kind, dir, source] = process.argv.slice(2)
let close: () => Promise<void>

/** Listens on a free loopback port and prints the URL; resolves with the way to stop. */
async function serve(server: HttpServer): Promise<() => Promise<void>> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`)
  return () => new Promise((resolve) => server.close(() => resolve()))
}
if (kind === 'bare') {
  const body = JSON.stringify({status: 'ok'})
  const server = createServer((_req, res) => {
    res.writeHead(200, {'content-type': 'application/json', 'content-length': Buffer.byteLength(body)})
    res.end(body)
  })
  close = await serve(server)
} else if (kind === 'durable') {
  // Group commit with nothing else: bodies written one after another in a region written once before (so no
  // flush also records a larger file), answered after one fdatasync for the writes waiting together. A lone
  // write waits up to 1 ms for the bench's other connection, as the service's group commit does.
  const REGION = 4 * 1024 * 1024
  const fd = openSync(join(dir as string, 'durable.log'), 'w+')
  writeSync(fd, Buffer.alloc(REGION))
  fdatasyncSync(fd)
  let offset = 0
  let waiting: ServerResponse[] = []
  let timer: NodeJS.Timeout | undefined
  const flush = () => {
    clearTimeout(timer)
    timer = undefined
    fdatasyncSync(fd)
    for (const res of waiting) res.writeHead(200, {'content-type': 'text/plain', 'content-length': 2}).end('OK')
    waiting = []
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      if (offset + body.length > REGION) offset = 0
      offset += writeSync(fd, body, 0, body.length, offset)
      waiting.push(res)
      if (waiting.length >= 2) flush()
      else timer ??= setTimeout(flush, 1)
    })
  })
  const stop = await serve(server)
  close = () => stop().then(() => closeSync(fd))
} else {
  const src = source ? join(source, 'src') : new URL('../src', import.meta.url).pathname
  const load = <T>(module: string) => import(pathToFileURL(join(src, module)).href) as Promise<T>
  const {createSecretsService} = await load<typeof Server>('lib/secrets/service/server.js')
  const {openSqliteStorage} = await load<typeof Sqlite>('lib/secrets/service/sqlite.js')
  const unlimited = {limit: 1e9, windowMs: 60_000}
  const service = createSecretsService({
    storage: openSqliteStorage(join(dir as string, 'secrets.db')),
    masterKey: randomBytes(32),
    // loginPerIp: the name of the IP limit before failures were counted apart (a baseline may be that old).
    limits: {loginPerAddress: unlimited, loginFailuresPerIp: unlimited, ...{loginPerIp: unlimited}},
  })
  process.stdout.write(`${await service.listen(0, '127.0.0.1')}\n`)
  close = () => service.close()
}
process.once('SIGTERM', () => void close().then(() => process.exit(0)))
