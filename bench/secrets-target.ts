/**
 * A server under load for bench/secrets.bench.ts, in a process of its own so the load generator does not share
 * its event loop: `bare` (node:http answering a fixed JSON body) or `service` (the secrets service on SQLite in
 * DIR, login limits raised), from this checkout or from the checkout SOURCE (a baseline). Prints its URL on
 * stdout; stops on SIGTERM. `--cpu-prof` on the node command line profiles it.
 */
import {randomBytes} from 'node:crypto'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import type * as Server from '../src/lib/secrets/service/server.js'
import type * as Sqlite from '../src/lib/secrets/service/sqlite.js'

const [kind, dir, source] = process.argv.slice(2)
let close: () => Promise<void>
if (kind === 'bare') {
  const body = JSON.stringify({status: 'ok'})
  const server = createServer((_req, res) => {
    res.writeHead(200, {'content-type': 'application/json', 'content-length': Buffer.byteLength(body)})
    res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`)
  close = () => new Promise((resolve) => server.close(() => resolve()))
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
