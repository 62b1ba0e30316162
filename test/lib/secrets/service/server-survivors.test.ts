/**
 * What a client and an operator observe of the secrets service's HTTP layer that the mutation audit found
 * untested (issue 26, server.ts, body.ts and http-error.ts survivors). Every test starts its own service inside
 * the test, so that a mutation run that measures coverage per test runs it against the code it covers.
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'
import fs from 'node:fs'
import {setTimeout as sleep} from 'node:timers/promises'
import {request} from 'node:http'
import {connect} from 'node:net'

import type {JobRecord} from '../../../../src/lib/secrets/service/auth.js'
import {ApiError} from '../../../../src/lib/http/api-error.js'
import {createSecretsService, DEFAULT_LIMITS} from '../../../../src/lib/secrets/service/server.js'
import {
  call,
  login,
  MemoryAuthority,
  newAddress,
  newWallet,
  signLogin,
  sqliteAdapter,
  startService,
} from '../../../helpers/secrets.js'

/** The error code and message of an answer in the service's one error shape, after checking its status. */
function errorOf(
  answer: {status: number; body: unknown; text: string},
  status: number,
): {code: string; message: string} {
  assert.equal(answer.status, status, answer.text)
  return (answer.body as {error: {code: string; message: string}}).error
}

/** A request to the service a web page would send: its Origin is another site's. */
function fromWebPage(url: string): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const {hostname, port} = new URL(url)
    const req = request({host: hostname, port, path: '/health', headers: {origin: 'https://evil.example'}}, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({status: res.statusCode!, body}))
    })
    req.on('error', reject)
    req.end()
  })
}

/** A service on a fresh SQLite store, built here so that a test can give it options startService does not take. */
async function serve(options: Omit<Parameters<typeof createSecretsService>[0], 'storage' | 'masterKey'> = {}) {
  const opened = await sqliteAdapter.open()
  const lines: string[] = []
  const service = createSecretsService({
    storage: opened.storage,
    masterKey: randomBytes(32),
    log: (line) => lines.push(line),
    ...options,
  })
  return {service, storage: opened.storage, lines, cleanup: opened.cleanup}
}

describe('secrets service: what the mutation audit found untested in its HTTP layer', () => {
  describe('hosts and login messages', () => {
    it('advertises only the host it listens on when given none, and logs in with the message bound to it', async () => {
      const s = await startService(sqliteAdapter)
      try {
        const host = new URL(s.url).host
        assert.deepEqual((await call(s.url, 'GET', '/health')).body, {status: 'ok', login: {hosts: [host]}})
        const params = signLogin(newWallet(), {prefix: `gpunet_secret_${host}_`})
        const answer = await call(s.url, 'POST', '/login', {params})
        assert.equal(answer.status, 200, answer.text)
      } finally {
        await s.stop()
      }
    })

    it('lists the hosts it is given once each, in lower case, before its own, and logs in with their messages', async () => {
      const s = await serve({hosts: ['Secrets.Example.COM:8443']})
      try {
        const url = await s.service.listen(0, '127.0.0.1')
        const health = await call(url, 'GET', '/health')
        assert.deepEqual(health.body, {
          status: 'ok',
          login: {hosts: ['secrets.example.com:8443', new URL(url).host]},
        })
        const params = signLogin(newWallet(), {prefix: 'gpunet_secret_secrets.example.com:8443_'})
        const answer = await call(url, 'POST', '/login', {params})
        assert.equal(answer.status, 200, answer.text)
      } finally {
        await s.service.close()
        await s.cleanup()
      }
    })
  })

  describe('listening', () => {
    it('has no URL until it listens, and listens on 127.0.0.1, guarded against web pages, by default', async () => {
      const s = await serve()
      try {
        assert.equal(s.service.url, '')
        const url = await s.service.listen()
        assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/)
        assert.equal(s.service.url, url)
        assert.equal((await fromWebPage(url)).status, 403)
      } finally {
        await s.service.close()
        await s.cleanup()
      }
    })

    it("refuses a web page's request in its one error shape, with the code refused", async () => {
      const s = await startService(sqliteAdapter)
      try {
        const answer = await fromWebPage(s.url)
        assert.equal(answer.status, 403)
        assert.deepEqual(JSON.parse(answer.body), {
          error: {
            code: 'refused',
            message:
              'requests from the web page at "https://evil.example" are refused; allow its origin with GPUNET_ALLOW_ORIGIN',
          },
        })
      } finally {
        await s.stop()
      }
    })

    it('counts failed logins against the connecting address, not X-Forwarded-For, unless told to trust a proxy', async () => {
      const s = await startService(sqliteAdapter, {limits: {loginFailuresPerIp: {limit: 2, windowMs: 60_000}}})
      try {
        // The connecting address is loopback: failures count per claimed address, whatever X-Forwarded-For says.
        const claimed = newAddress()
        const fail = (forwardedFor: string) =>
          call(s.url, 'POST', '/login', {
            // Well formed, signed by another key than the address's.
            params: {...signLogin(newWallet()), address: claimed},
            headers: {'x-forwarded-for': forwardedFor},
          })
        assert.equal(errorOf(await fail('203.0.113.1'), 401).code, 'invalid_signature')
        assert.equal(errorOf(await fail('203.0.113.2'), 401).code, 'invalid_signature')
        const third = await fail('203.0.113.3')
        assert.equal(errorOf(third, 429).code, 'rate_limited')
        assert.ok(
          s.lines.every((line) => line.includes(' 127.0.0.1 POST /login ')),
          s.lines.join('\n'),
        )
      } finally {
        await s.stop()
      }
    })

    it('writes nothing to stdout of its own (secrets serve --json prints its JSON there)', async () => {
      // In this process, so that a mutation run reaches it: every way a write reaches fd 1 (the stream, and the
      // file-descriptor writes a logger such as pino makes) is recorded while the service answers.
      const written: string[] = []
      /** `original` (fs.write or fs.writeSync), recording what it is given for stdout. */
      const recording = <F>(original: F): F =>
        ((fd: unknown, ...rest: unknown[]) => {
          if (fd === 1 || fd === process.stdout.fd) written.push(String(rest[0]))
          return (original as (...args: unknown[]) => unknown)(fd, ...rest)
        }) as F
      const {write, writeSync} = fs
      const streamWrite = process.stdout.write
      fs.write = recording(write)
      fs.writeSync = recording(writeSync)
      process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
        written.push(String(chunk))
        return (streamWrite as (...args: unknown[]) => boolean).call(process.stdout, chunk, ...rest)
      }) as typeof process.stdout.write
      try {
        const opened = await sqliteAdapter.open()
        const service = createSecretsService({storage: opened.storage, masterKey: randomBytes(32)})
        try {
          const url = await service.listen(0, '127.0.0.1')
          await call(url, 'GET', '/health')
          await call(url, 'GET', '/nope')
          await call(url, 'POST', '/login', {rawBody: '{', contentType: 'application/json'})
        } finally {
          await service.close()
          await opened.cleanup()
        }
      } finally {
        fs.write = write
        fs.writeSync = writeSync
        process.stdout.write = streamWrite
      }
      assert.deepEqual(written, [])
    })
  })

  describe('its log', () => {
    it('logs one line per request: time, client, method, path without query, status and duration', async () => {
      const s = await startService(sqliteAdapter)
      try {
        await call(s.url, 'GET', '/health?verbose=1')
        assert.equal(s.lines.length, 1)
        assert.match(
          s.lines[0] as string,
          /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z 127\.0\.0\.1 GET \/health 200 \d+\.\dms$/,
        )
      } finally {
        await s.stop()
      }
    })

    it('ends the line of a request with who made it: the address, or the poster and the job', async () => {
      const authority = new MemoryAuthority()
      const s = await startService(sqliteAdapter, {authority})
      try {
        const poster = newWallet()
        const node = newWallet()
        const job = newAddress()
        authority.run(job, {node: node.address, poster: poster.address, definition: {version: '0.1', ops: []}})
        const posterToken = await login(s.url, poster)
        await call(s.url, 'GET', '/secrets', {token: posterToken})
        const jobToken = await login(s.url, node, {job})
        await call(s.url, 'GET', '/secrets', {token: jobToken})
        assert.equal(s.lines.length, 4)
        assert.match(s.lines[0] as string, new RegExp(` POST /login 200 \\S+ms ${poster.address}$`))
        assert.match(s.lines[1] as string, new RegExp(` GET /secrets 200 \\S+ms ${poster.address}$`))
        assert.match(s.lines[2] as string, new RegExp(` POST /login 200 \\S+ms ${node.address}$`))
        assert.match(s.lines[3] as string, new RegExp(` GET /secrets 200 \\S+ms ${poster.address} job=${job}$`))
      } finally {
        await s.stop()
      }
    })

    it('logs an internal error with its name and message, and no refusal as one', async () => {
      const s = await startService(sqliteAdapter, {limits: {secretsPerOwner: 1}})
      try {
        const wallet = newWallet()
        const token = await login(s.url, wallet)
        // Refusals: a 415 from Fastify, a quota refusal (413 and 400), a 503 of the service's own.
        await call(s.url, 'POST', '/secrets', {token, rawBody: '<x/>', contentType: 'application/xml'})
        await call(s.url, 'POST', '/secrets', {token, params: {secrets: {A: '1', B: '2'}}})
        await call(s.url, 'POST', '/login', {params: signLogin(newWallet(), {job: newAddress()})})
        assert.deepEqual(
          s.lines.filter((line) => line.startsWith('internal error')),
          [],
        )
        // A value sealed for another name does not decrypt: an internal error, logged for the operator.
        await call(s.url, 'POST', '/secrets', {token, params: {secrets: {A: '1'}}})
        const [sealed] = await s.storage.list(wallet.address)
        await s.storage.delete(wallet.address, 'A')
        await s.storage.put(wallet.address, [{name: 'B', sealed: sealed!.sealed}], DEFAULT_LIMITS)
        const answer = await call(s.url, 'GET', '/secrets', {token})
        assert.deepEqual(errorOf(answer, 500), {code: 'internal', message: 'internal error'})
        const internal = s.lines.filter((line) => line.startsWith('internal error'))
        assert.equal(internal.length, 1, s.lines.join('\n'))
        assert.match(internal[0] as string, /^internal error: Error: \S.*$/)
      } finally {
        await s.stop()
      }
    })

    it('does not log a client that hangs up in the middle of its body as an internal error', async () => {
      const s = await startService(sqliteAdapter)
      try {
        const {port} = new URL(s.url)
        const socket = connect(Number(port), '127.0.0.1')
        socket.on('error', () => {})
        await new Promise<void>((resolve) => socket.on('connect', resolve))
        socket.write(
          `POST /login HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
            'Content-Length: 100\r\n\r\n{"address":',
        )
        // Fixed waits: nothing tells when the service has read the partial body, nor that it logged nothing.
        await sleep(200)
        socket.destroy()
        await sleep(500)
        // The service is still there, and the hang-up left no internal error in its log.
        assert.equal((await call(s.url, 'GET', '/health')).status, 200)
        assert.deepEqual(
          s.lines.filter((line) => line.startsWith('internal error')),
          [],
        )
      } finally {
        await s.stop()
      }
    })
  })

  describe('answers', () => {
    it('names the method and the path without its query in a no_route answer', async () => {
      const s = await startService(sqliteAdapter)
      try {
        assert.deepEqual(errorOf(await call(s.url, 'PUT', '/secrets?key=A'), 404), {
          code: 'no_route',
          message: 'no route PUT /secrets',
        })
      } finally {
        await s.stop()
      }
    })

    it('refuses a URL with a broken percent-escape with 400 invalid_url, in its own error shape', async () => {
      const s = await startService(sqliteAdapter)
      try {
        for (const path of ['/%zz', '/secrets%zz']) {
          assert.deepEqual(errorOf(await call(s.url, 'GET', path), 400), {
            code: 'invalid_url',
            message: `not a valid URL: ${path}`,
          })
        }
        // A long one is quoted to its first 200 characters only.
        const long = `/%zz${'a'.repeat(300)}`
        assert.deepEqual(errorOf(await call(s.url, 'GET', long), 400), {
          code: 'invalid_url',
          message: `not a valid URL: ${long.slice(0, 200)}`,
        })
      } finally {
        await s.stop()
      }
    })

    it('answers 503 storage_unavailable on /health when its storage does not answer', async () => {
      const s = await serve()
      const url = await s.service.listen(0, '127.0.0.1')
      try {
        assert.equal((await call(url, 'GET', '/health')).status, 200)
        await s.storage.close()
        assert.deepEqual(errorOf(await call(url, 'GET', '/health'), 503), {
          code: 'storage_unavailable',
          message: 'the storage does not answer',
        })
      } finally {
        // The service closes its storage again, which the closed SQLite file refuses.
        await s.service.close().catch(() => {})
        await s.cleanup()
      }
    })

    it('answers OK as plain text to a write and a delete', async () => {
      const s = await startService(sqliteAdapter)
      try {
        const token = await login(s.url, newWallet())
        for (const answer of [
          await call(s.url, 'POST', '/secrets', {token, params: {secrets: {A: '1'}}}),
          await call(s.url, 'DELETE', '/secrets?key=A', {token}),
        ]) {
          assert.equal(answer.status, 200)
          assert.equal(answer.text, 'OK')
          assert.equal(answer.headers.get('content-type'), 'text/plain; charset=utf-8')
        }
      } finally {
        await s.stop()
      }
    })

    it('refuses a DELETE whose key is empty as a missing parameter, keeping every secret', async () => {
      const s = await startService(sqliteAdapter)
      try {
        const token = await login(s.url, newWallet())
        await call(s.url, 'POST', '/secrets', {token, params: {secrets: {A: '1'}}})
        for (const answer of [
          await call(s.url, 'DELETE', '/secrets?key=', {token}),
          await call(s.url, 'DELETE', '/secrets', {token, params: {key: ''}}),
        ]) {
          assert.deepEqual(errorOf(answer, 400), {
            code: 'missing_parameter',
            message: 'key is required (the name of the secret to delete)',
          })
        }
        assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {A: '1'})
      } finally {
        await s.stop()
      }
    })

    it('refuses a body that is not UTF-8 saying so, in JSON and in a form', async () => {
      const s = await startService(sqliteAdapter)
      try {
        const token = await login(s.url, newWallet())
        for (const [contentType, before, after] of [
          ['application/json', '{"secrets": {"A": "', '"}}'],
          ['application/x-www-form-urlencoded', 'secrets={"A":"', '"}'],
        ] as const) {
          const answer = await fetch(`${s.url}/secrets`, {
            method: 'POST',
            headers: {authorization: `Bearer ${token}`, 'content-type': contentType},
            body: Buffer.concat([Buffer.from(before), Buffer.from([0xff, 0xfe]), Buffer.from(after)]),
          })
          assert.equal(answer.status, 400)
          assert.deepEqual(await answer.json(), {
            error: {code: 'malformed_body', message: 'the body is not valid UTF-8'},
          })
        }
      } finally {
        await s.stop()
      }
    })

    it('answers 503 chain_unavailable with Retry-After 5 when the chain does not answer a job login in time', async () => {
      const authority = new MemoryAuthority()
      const node = newWallet()
      const job = newAddress()
      authority.run(job, {node: node.address, poster: newAddress(), definition: {version: '0.1', ops: []}})
      const getJob = authority.getJob.bind(authority)
      // The chain answers, but only after the deadline: a running job the node may log in to.
      let late: Promise<unknown> | undefined
      authority.getJob = async (address: string): Promise<JobRecord | null> => {
        const answer = sleep(1500).then(() => getJob(address))
        late = answer
        return answer
      }
      const s = await startService(sqliteAdapter, {authority, limits: {jobLoginDeadlineMs: 100}})
      try {
        const answer = await call(s.url, 'POST', '/login', {params: signLogin(node, {job})})
        assert.deepEqual(errorOf(answer, 503), {
          code: 'chain_unavailable',
          message: "the chain or the job's definition did not answer within 100 ms; try again",
        })
        assert.equal(answer.headers.get('retry-after'), '5')
      } finally {
        // Stopped once the late answer came, which the service no longer waits for.
        await late
        await s.stop()
      }
    })

    it('leaves no deadline timer that keeps the process running after a job login and close', async () => {
      // The timers that keep the event loop alive, counted in this process (a mutation run reaches no child).
      const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length
      const authority = new MemoryAuthority()
      const node = newWallet()
      const job = newAddress()
      authority.run(job, {node: node.address, poster: newAddress(), definition: {version: '0.1', ops: []}})
      const s = await serve({authority, limits: {jobLoginDeadlineMs: 600_000}})
      // Counted once the test is under way: mocha's own timeout timer is among them.
      const before = timers()
      const url = await s.service.listen(0, '127.0.0.1')
      try {
        await login(url, node, {job})
      } finally {
        await s.service.close()
        await s.cleanup()
      }
      // At most as many: a timer of an earlier test may have fired meanwhile, never one of this service left.
      assert.ok(timers() <= before, process.getActiveResourcesInfo().join(', '))
    })
  })

  it('names its HTTP errors, as the storage names its own', () => {
    const error = new ApiError(404, 'not_found', 'no secret named A')
    assert.equal(error.name, 'ApiError')
    assert.equal(String(error), 'ApiError: no secret named A')
  })
})
