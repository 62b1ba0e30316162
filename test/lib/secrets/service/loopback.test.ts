/**
 * The secrets service guards against web pages only where web pages can reach it and nobody else can: bound to a
 * loopback address (127.x, ::1, localhost). Bound to every address it is a public service, reached through its
 * host name, and the guard is off (issue 26, secrets survivors: the guard was tested on 127.0.0.1 alone).
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'
import {request} from 'node:http'

import {createSecretsService} from '../../../../src/lib/secrets/service/index.js'
import {sqliteAdapter} from '../../../helpers/secrets.js'

/** GET /health from this machine with a web page's Origin. */
function fromWebPage(address: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({host: address, port, path: '/health', headers: {origin: 'https://evil.example'}}, (res) => {
      res.resume()
      resolve(res.statusCode!)
    })
    req.on('error', reject)
    req.end()
  })
}

describe('secrets service: the web-page guard follows the address it listens on', () => {
  for (const [listen, connect, guarded] of [
    ['127.0.0.1', '127.0.0.1', true],
    ['::1', '::1', true],
    ['localhost', 'localhost', true],
    // Loopback written otherwise (issue 42): the guard follows the address, not its spelling.
    ['0:0:0:0:0:0:0:1', '::1', true],
    ['::ffff:127.0.0.1', '127.0.0.1', true],
    ['127.0.0.2', '127.0.0.2', true],
    ['0.0.0.0', '127.0.0.1', false],
  ] as const) {
    it(`${listen}: a page's request is ${guarded ? 'refused (403)' : 'served'}`, async () => {
      const opened = await sqliteAdapter.open()
      const service = createSecretsService({storage: opened.storage, masterKey: randomBytes(32)})
      try {
        const url = await service.listen(0, listen)
        const port = Number(new URL(url).port)
        assert.equal(await fromWebPage(connect, port), guarded ? 403 : 200)
      } finally {
        await service.close()
        await opened.cleanup()
      }
    })
  }
})
