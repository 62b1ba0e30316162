/**
 * A server under load for bench/secrets.bench.ts, in a process of its own so the load generator does not share
 * its event loop: `bare` (node:http answering a fixed JSON body) or `service` (the secrets service on SQLite in
 * DIR, login limits raised). Prints its URL on stdout; stops on SIGTERM. `--cpu-prof` on the node command line
 * profiles it.
 */
import {randomBytes} from 'node:crypto'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'

import {createSecretsService} from '../src/lib/secrets/service/server.js'
import {openSqliteStorage} from '../src/lib/secrets/service/sqlite.js'

const [kind, dir] = process.argv.slice(2)
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
  const unlimited = {limit: 1e9, windowMs: 60_000}
  const service = createSecretsService({
    storage: openSqliteStorage(join(dir as string, 'secrets.db')),
    masterKey: randomBytes(32),
    limits: {loginPerAddress: unlimited, loginFailuresPerIp: unlimited},
  })
  process.stdout.write(`${await service.listen(0, '127.0.0.1')}\n`)
  close = () => service.close()
}
process.once('SIGTERM', () => void close().then(() => process.exit(0)))
