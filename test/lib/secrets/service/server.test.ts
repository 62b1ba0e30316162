import bs58 from 'bs58'
import {decodeJwt, decodeProtectedHeader, SignJWT} from 'jose'
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'

import {type JobRecord, TokenIssuer} from '../../../../src/lib/secrets/service/auth.js'
import {deriveKey} from '../../../../src/lib/secrets/service/crypto.js'
import type {SecretStorage} from '../../../../src/lib/secrets/service/storage.js'
import {
  call,
  type Encoding,
  forEachAdapter,
  login,
  MemoryAuthority,
  newAddress,
  newWallet,
  signLogin,
  startService,
} from '../../../helpers/secrets.js'

type Started = Awaited<ReturnType<typeof startService>>

/** The one error shape of the service, and nothing else in the body. */
function assertError(answer: {status: number; body: unknown}, status: number, code: string): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body))
  const body = answer.body as {error: {code: string; message: string}}
  assert.deepEqual(Object.keys(body), ['error'])
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message'])
  assert.equal(body.error.code, code)
  assert.ok(body.error.message.length > 0)
}

forEachAdapter('secrets service', (adapter) => {
  const masterKey = randomBytes(32)
  const authority = new MemoryAuthority()
  let s: Started

  before(async () => {
    s = await startService(adapter, {
      masterKey,
      authority,
      limits: {
        secretsPerOwner: 50,
        loginPerAddress: {limit: 1000, windowMs: 60_000},
        loginPerIp: {limit: 100_000, windowMs: 60_000},
      },
    })
  })
  after(async () => s.stop())

  for (const encoding of ['json', 'form'] as Encoding[]) {
    describe(`endpoints with ${encoding} bodies`, () => {
      it('logs in and answers a HS256 JWT that expires within one hour', async () => {
        const wallet = newWallet()
        const answer = await call(s.url, 'POST', '/login', {params: signLogin(wallet), encoding})
        assert.equal(answer.status, 200)
        const token = (answer.body as {token: string}).token
        assert.equal(decodeProtectedHeader(token).alg, 'HS256')
        const claims = decodeJwt(token)
        assert.equal(claims.sub, wallet.address)
        assert.ok((claims.exp as number) - (claims.iat as number) <= 3600)
        assert.ok((claims.exp as number) > Date.now() / 1000)
      })

      it('stores, lists, replaces and deletes secrets, answering OK as text', async () => {
        const token = await login(s.url, newWallet(), {encoding})
        const first = await call(s.url, 'POST', '/secrets', {
          token,
          encoding,
          params: {secrets: {API_KEY: 'one', 'db.pass-word': 'p=w&d %'}},
        })
        assert.equal(first.status, 200)
        assert.equal(first.text, 'OK')
        assert.match(first.headers.get('content-type') ?? '', /^text\/plain/)
        assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {
          API_KEY: 'one',
          'db.pass-word': 'p=w&d %',
        })

        assert.equal(
          (await call(s.url, 'POST', '/secrets', {token, encoding, params: {secrets: {API_KEY: 'two'}}})).status,
          200,
        )
        assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {
          API_KEY: 'two',
          'db.pass-word': 'p=w&d %',
        })

        const deleted = await call(s.url, 'DELETE', '/secrets', {token, encoding, params: {key: 'API_KEY'}})
        assert.equal(deleted.status, 200)
        assert.equal(deleted.text, 'OK')
        assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {'db.pass-word': 'p=w&d %'})
        assertError(
          await call(s.url, 'DELETE', '/secrets', {token, encoding, params: {key: 'API_KEY'}}),
          404,
          'not_found',
        )
      })

      it('refuses missing or malformed parameters with 400', async () => {
        const token = await login(s.url, newWallet(), {encoding})
        assertError(
          await call(s.url, 'POST', '/secrets', {token, encoding, params: {other: 'x'}}),
          400,
          'missing_parameter',
        )
        assertError(
          await call(s.url, 'POST', '/secrets', {token, encoding, params: {secrets: {}}}),
          400,
          'invalid_secrets',
        )
        assertError(
          await call(s.url, 'POST', '/secrets', {token, encoding, params: {secrets: {A: 1}}}),
          400,
          'invalid_value',
        )
        assertError(
          await call(s.url, 'DELETE', '/secrets', {token, encoding, params: {nokey: 'x'}}),
          400,
          'missing_parameter',
        )
        const noAddress = signLogin(newWallet())
        delete noAddress.address
        assertError(await call(s.url, 'POST', '/login', {encoding, params: noAddress}), 400, 'missing_parameter')
        assertError(
          await call(s.url, 'POST', '/login', {encoding, params: {...signLogin(newWallet()), address: 'not-base58!'}}),
          400,
          'invalid_address',
        )
        assertError(
          await call(s.url, 'POST', '/login', {encoding, params: {...signLogin(newWallet()), timestamp: '12.5'}}),
          400,
          'invalid_timestamp',
        )
        assertError(
          await call(s.url, 'POST', '/login', {encoding, params: {...signLogin(newWallet()), job: 'short'}}),
          400,
          'invalid_job',
        )
      })

      it('refuses non-ASCII names', async () => {
        const token = await login(s.url, newWallet(), {encoding})
        for (const name of ['naïve', '秘密', 'KEY\u00a0X', 'emoji😀']) {
          assertError(
            await call(s.url, 'POST', '/secrets', {token, encoding, params: {secrets: {[name]: 'v'}}}),
            400,
            'invalid_name',
          )
          assertError(
            await call(s.url, 'DELETE', '/secrets', {token, encoding, params: {key: name}}),
            400,
            'invalid_name',
          )
        }
        assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {})
      })
    })
  }

  it('takes the key of DELETE from the query too, and refuses a query and a body that disagree', async () => {
    const token = await login(s.url, newWallet())
    await call(s.url, 'POST', '/secrets', {token, params: {secrets: {A: '1', B: '2'}}})
    assert.equal((await call(s.url, 'DELETE', '/secrets?key=A', {token})).status, 200)
    assertError(await call(s.url, 'DELETE', '/secrets?key=B', {token, params: {key: 'C'}}), 400, 'conflicting_key')
    assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {B: '2'})
  })

  it('keeps owners apart', async () => {
    const alice = await login(s.url, newWallet())
    const bob = await login(s.url, newWallet())
    await call(s.url, 'POST', '/secrets', {token: alice, params: {secrets: {SHARED_NAME: 'alice'}}})
    await call(s.url, 'POST', '/secrets', {token: bob, params: {secrets: {SHARED_NAME: 'bob'}}})
    assert.deepEqual((await call(s.url, 'GET', '/secrets', {token: alice})).body, {SHARED_NAME: 'alice'})
    assert.deepEqual((await call(s.url, 'GET', '/secrets', {token: bob})).body, {SHARED_NAME: 'bob'})
  })

  it('answers health', async () => {
    const answer = await call(s.url, 'GET', '/health')
    assert.equal(answer.status, 200)
    assert.deepEqual(answer.body, {status: 'ok'})
  })

  describe('login', () => {
    const now = () => Math.floor(Date.now() / 1000)

    it('refuses a replayed signature', async () => {
      const params = signLogin(newWallet())
      assert.equal((await call(s.url, 'POST', '/login', {params})).status, 200)
      assertError(await call(s.url, 'POST', '/login', {params}), 401, 'replayed_signature')
      assertError(await call(s.url, 'POST', '/login', {params, encoding: 'form'}), 401, 'replayed_signature')
    })

    it('refuses stale and future timestamps, and accepts one within 60 seconds', async () => {
      const wallet = newWallet()
      assertError(
        await call(s.url, 'POST', '/login', {params: signLogin(wallet, {timestamp: now() - 75})}),
        401,
        'stale_timestamp',
      )
      assertError(
        await call(s.url, 'POST', '/login', {params: signLogin(wallet, {timestamp: now() + 75})}),
        401,
        'stale_timestamp',
      )
      assert.equal(
        (await call(s.url, 'POST', '/login', {params: signLogin(wallet, {timestamp: now() - 45})})).status,
        200,
      )
      assert.equal(
        (await call(s.url, 'POST', '/login', {params: signLogin(wallet, {timestamp: now() + 45})})).status,
        200,
      )
    })

    it('refuses a signature of another message', async () => {
      const params = signLogin(newWallet(), {timestamp: now() - 1})
      assertError(
        await call(s.url, 'POST', '/login', {params: {...params, timestamp: now()}}),
        401,
        'invalid_signature',
      )
    })

    it('refuses a signature made by another key', async () => {
      const victim = newWallet()
      const forged = {...signLogin(newWallet()), address: victim.address}
      assertError(await call(s.url, 'POST', '/login', {params: forged}), 401, 'invalid_signature')
    })

    it('refuses a signature with a flipped bit', async () => {
      const params = signLogin(newWallet())
      const bytes = bs58.decode(params.signature as string)
      bytes[10] = (bytes[10] as number) ^ 1
      assertError(
        await call(s.url, 'POST', '/login', {params: {...params, signature: bs58.encode(bytes)}}),
        401,
        'invalid_signature',
      )
    })
  })

  describe('tokens', () => {
    it('refuses a missing, garbage or foreign bearer token', async () => {
      assertError(await call(s.url, 'GET', '/secrets'), 401, 'missing_token')
      assertError(await call(s.url, 'GET', '/secrets', {token: 'garbage'}), 401, 'invalid_token')
      const foreign = await new TokenIssuer(randomBytes(32)).issue(
        newWallet().address,
        {kind: 'owner', owner: 'x'},
        Math.floor(Date.now() / 1000) + 60,
      )
      assertError(await call(s.url, 'GET', '/secrets', {token: foreign}), 401, 'invalid_token')
    })

    it('refuses a token whose payload was tampered with', async () => {
      const victim = newWallet()
      const victimToken = await login(s.url, victim)
      await call(s.url, 'POST', '/secrets', {token: victimToken, params: {secrets: {MINE: 'victim value'}}})
      const [header, , signature] = (await login(s.url, newWallet())).split('.')
      const payload = Buffer.from(JSON.stringify({...decodeJwt(victimToken), jti: 'x'})).toString('base64url')
      const answer = await call(s.url, 'GET', '/secrets', {token: `${header}.${payload}.${signature}`})
      assertError(answer, 401, 'invalid_token')
      assert.ok(!answer.text.includes('victim value'))
    })

    it('refuses alg none and another algorithm signed with the same key', async () => {
      const wallet = newWallet()
      const claims = decodeJwt(await login(s.url, wallet))
      const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`
      assertError(await call(s.url, 'GET', '/secrets', {token: none}), 401, 'invalid_token')
      const hs512 = await new SignJWT(claims)
        .setProtectedHeader({alg: 'HS512'})
        .sign(deriveKey(masterKey, 'login-tokens'))
      assertError(await call(s.url, 'GET', '/secrets', {token: hs512}), 401, 'invalid_token')
    })

    it('refuses an expired token', async () => {
      const wallet = newWallet()
      const expired = await new TokenIssuer(deriveKey(masterKey, 'login-tokens')).issue(
        wallet.address,
        {kind: 'owner', owner: wallet.address},
        Math.floor(Date.now() / 1000) - 5,
      )
      assertError(await call(s.url, 'GET', '/secrets', {token: expired}), 401, 'token_expired')
    })
  })

  describe('job tokens', () => {
    const poster = newWallet()
    const node = newWallet()
    const job = newAddress()
    let posterToken: string

    /** Puts a job run by `node` for `poster` on the test chain, running for ten more minutes unless told. */
    function addJob(address: string, record: Partial<JobRecord> = {}): void {
      const endsAt = Math.floor(Date.now() / 1000) + 600
      authority.jobs.set(address, {node: node.address, poster: poster.address, endsAt, running: true, ...record})
    }

    before(async () => {
      posterToken = await login(s.url, poster)
      await call(s.url, 'POST', '/secrets', {
        token: posterToken,
        params: {secrets: {HF_TOKEN: 'hf', DB_PASS: 'db', UNREFERENCED: 'never'}},
      })
      addJob(job)
      authority.definitions.set(job, {
        version: '0.1',
        type: 'container',
        ops: [
          {
            id: 'a',
            type: 'container/run',
            args: {
              image: 'x',
              env: {HF: '%%secrets.HF_TOKEN%%', DB: 'u:%%secrets.DB_PASS%%', M: '%%secrets.MISSING%%'},
            },
          },
        ],
      })
    })

    it('reads exactly the referenced secrets of the poster, until the job ends', async () => {
      const token = await login(s.url, node, {job})
      assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {DB_PASS: 'db', HF_TOKEN: 'hf'})
      assert.ok((decodeJwt(token).exp as number) <= (authority.jobs.get(job)?.endsAt as number))
    })

    it('lives no longer than the job has left', async () => {
      const shortJob = newAddress()
      const endsAt = Math.floor(Date.now() / 1000) + 90
      addJob(shortJob, {endsAt})
      authority.definitions.set(shortJob, {})
      assert.equal(decodeJwt(await login(s.url, node, {job: shortJob})).exp, endsAt)
    })

    it('can neither write nor delete', async () => {
      const token = await login(s.url, node, {job})
      assertError(
        await call(s.url, 'POST', '/secrets', {token, params: {secrets: {HF_TOKEN: 'overwritten'}}}),
        403,
        'read_only_token',
      )
      assertError(await call(s.url, 'DELETE', '/secrets', {token, params: {key: 'HF_TOKEN'}}), 403, 'read_only_token')
      assert.equal(
        ((await call(s.url, 'GET', '/secrets', {token: posterToken})).body as Record<string, string>).HF_TOKEN,
        'hf',
      )
    })

    it('is refused to another node, for an unknown job and for a job that is not running', async () => {
      assertError(await call(s.url, 'POST', '/login', {params: signLogin(newWallet(), {job})}), 403, 'not_job_node')
      assertError(
        await call(s.url, 'POST', '/login', {params: signLogin(node, {job: newAddress()})}),
        403,
        'unknown_job',
      )
      const stopped = newAddress()
      addJob(stopped, {running: false})
      assertError(
        await call(s.url, 'POST', '/login', {params: signLogin(node, {job: stopped})}),
        403,
        'job_not_running',
      )
      const ended = newAddress()
      addJob(ended, {endsAt: Math.floor(Date.now() / 1000) - 1})
      assertError(await call(s.url, 'POST', '/login', {params: signLogin(node, {job: ended})}), 403, 'job_not_running')
    })

    it('does not let the poster log in as the node', async () => {
      assertError(await call(s.url, 'POST', '/login', {params: signLogin(poster, {job})}), 403, 'not_job_node')
    })
  })

  describe('limits and malformed bodies', () => {
    it('refuses a body over the limit with 413', async () => {
      const token = await login(s.url, newWallet())
      const answer = await call(s.url, 'POST', '/secrets', {
        token,
        params: {secrets: {BIG: 'x'.repeat(1024 * 1024 + 1)}},
      })
      assertError(answer, 413, 'body_too_large')
      assertError(
        await call(s.url, 'POST', '/login', {
          rawBody: `address=${'x'.repeat(1024 * 1024 + 1)}`,
          contentType: 'application/x-www-form-urlencoded',
        }),
        413,
        'body_too_large',
      )
    })

    it('stores a value of 64 KiB and refuses one byte more', async () => {
      const token = await login(s.url, newWallet())
      assert.equal(
        (await call(s.url, 'POST', '/secrets', {token, params: {secrets: {MAX: 'é'.repeat(32 * 1024)}}})).status,
        200,
      )
      assertError(
        await call(s.url, 'POST', '/secrets', {token, params: {secrets: {OVER: `${'é'.repeat(32 * 1024)}x`}}}),
        400,
        'value_too_large',
      )
      assert.deepEqual(Object.keys((await call(s.url, 'GET', '/secrets', {token})).body as object), ['MAX'])
    })

    it('refuses more secrets per owner than allowed, storing nothing of that request', async () => {
      const token = await login(s.url, newWallet())
      const many = Object.fromEntries(Array.from({length: 49}, (_, i) => [`S${i}`, 'v']))
      assert.equal((await call(s.url, 'POST', '/secrets', {token, params: {secrets: many}})).status, 200)
      assertError(
        await call(s.url, 'POST', '/secrets', {token, params: {secrets: {NEW1: 'v', NEW2: 'v'}}}),
        400,
        'too_many_secrets',
      )
      assert.equal(Object.keys((await call(s.url, 'GET', '/secrets', {token})).body as object).length, 49)
      assert.equal(
        (await call(s.url, 'POST', '/secrets', {token, params: {secrets: {S0: 'replaced', NEW1: 'v'}}})).status,
        200,
      )
    })

    it('refuses malformed JSON, malformed forms and bodies that are not objects', async () => {
      const token = await login(s.url, newWallet())
      const json = 'application/json'
      const form = 'application/x-www-form-urlencoded'
      const cases: Array<[string, string, string, number, string]> = [
        ['/secrets', '{"secrets": {"A": "1"', json, 400, 'malformed_body'],
        ['/login', '', json, 400, 'malformed_body'],
        ['/secrets', '["A"]', json, 400, 'invalid_body'],
        ['/secrets', '"A"', json, 400, 'invalid_body'],
        ['/secrets', 'secrets=%7Bbroken', form, 400, 'invalid_secrets'],
        ['/secrets', 'secrets=%ZZ%', form, 400, 'invalid_secrets'],
        ['/secrets', 'secrets=1&secrets=2', form, 400, 'invalid_secrets'],
        ['/secrets', '<x/>', 'application/xml', 415, 'unsupported_media_type'],
      ]
      for (const [path, rawBody, contentType, status, code] of cases) {
        assertError(await call(s.url, 'POST', path, {token, rawBody, contentType}), status, code)
      }
      assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {})
    })

    it('answers unknown routes with the same error shape', async () => {
      assertError(await call(s.url, 'GET', '/nope'), 404, 'no_route')
      assertError(await call(s.url, 'PUT', '/secrets'), 404, 'no_route')
    })
  })

  it('loses and mixes up nothing with 100 concurrent writers on overlapping names', async () => {
    const owners = await Promise.all(
      Array.from({length: 4}, async () => {
        const wallet = newWallet()
        return {wallet, token: await login(s.url, wallet)}
      }),
    )
    const writes = Array.from({length: 100}, (_, i) => ({owner: i % 4, i}))
    const answers = await Promise.all(
      writes.map(({owner, i}) =>
        call(s.url, 'POST', '/secrets', {
          token: owners[owner]?.token,
          encoding: i % 2 ? 'json' : 'form',
          params: {
            secrets: {[`SHARED_${i % 5}`]: `owner${owner}-writer${i}`, [`OWN_${i}`]: `owner${owner}-writer${i}`},
          },
        }),
      ),
    )
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(100).fill(200),
    )
    for (const [index, {token}] of owners.entries()) {
      const stored = (await call(s.url, 'GET', '/secrets', {token})).body as Record<string, string>
      const mine = writes.filter((w) => w.owner === index)
      for (const {i} of mine) assert.equal(stored[`OWN_${i}`], `owner${index}-writer${i}`)
      for (let k = 0; k < 5; k++) {
        const writers = mine.filter(({i}) => i % 5 === k).map(({i}) => `owner${index}-writer${i}`)
        if (writers.length > 0)
          assert.ok(writers.includes(stored[`SHARED_${k}`] as string), `SHARED_${k} = ${stored[`SHARED_${k}`]}`)
      }
      assert.equal(Object.keys(stored).length, mine.length + new Set(mine.map(({i}) => i % 5)).size)
    }
  })

  it('binds each value to its owner and name: a value copied to another row does not decrypt', async () => {
    const alice = newWallet()
    const bob = newWallet()
    const aliceToken = await login(s.url, alice)
    const bobToken = await login(s.url, bob)
    await call(s.url, 'POST', '/secrets', {token: aliceToken, params: {secrets: {TOKEN: 'alice secret'}}})
    const [sealed] = await s.storage.list(alice.address, ['TOKEN'])
    assert.ok(sealed && !sealed.sealed.includes(Buffer.from('alice secret')))
    await s.storage.put(bob.address, [{name: 'TOKEN', sealed: sealed.sealed}], 100)
    await s.storage.put(alice.address, [{name: 'OTHER', sealed: sealed.sealed}], 100)
    for (const token of [bobToken, aliceToken]) {
      const answer = await call(s.url, 'GET', '/secrets', {token})
      assertError(answer, 500, 'internal')
      assert.ok(!answer.text.includes('alice secret'))
    }
    await s.storage.delete(alice.address, 'OTHER')
    assert.deepEqual((await call(s.url, 'GET', '/secrets', {token: aliceToken})).body, {TOKEN: 'alice secret'})
  })

  it('logs one line per request, without values, tokens or signatures', async () => {
    const before = s.lines.length
    const params = signLogin(newWallet())
    const token = (await call(s.url, 'POST', '/login', {params})).body as {token: string}
    await call(s.url, 'POST', '/secrets', {
      token: token.token,
      params: {secrets: {LOGGED: 'value-that-must-not-be-logged'}},
    })
    await call(s.url, 'DELETE', '/secrets?key=LOGGED', {token: token.token})
    const lines = s.lines.slice(before)
    assert.equal(lines.length, 3)
    assert.match(lines[0] as string, /POST \/login 200/)
    assert.match(lines[2] as string, /DELETE \/secrets 200/)
    const all = lines.join('\n')
    for (const hidden of ['value-that-must-not-be-logged', token.token, params.signature as string])
      assert.ok(!all.includes(hidden))
  })
})

forEachAdapter('secrets service rate limits', (adapter) => {
  it('answers 429 with Retry-After per address and per client IP on /login', async () => {
    const s = await startService(adapter, {
      limits: {loginPerAddress: {limit: 3, windowMs: 60_000}, loginPerIp: {limit: 8, windowMs: 60_000}},
    })
    try {
      const wallet = newWallet()
      const now = Math.floor(Date.now() / 1000)
      for (let i = 0; i < 3; i++)
        assert.equal(
          (await call(s.url, 'POST', '/login', {params: signLogin(wallet, {timestamp: now - i})})).status,
          200,
        )
      const limited = await call(s.url, 'POST', '/login', {params: signLogin(wallet, {timestamp: now - 3})})
      assertError(limited, 429, 'rate_limited')
      assert.ok(Number(limited.headers.get('retry-after')) >= 1)
      for (let i = 0; i < 4; i++)
        assert.equal((await call(s.url, 'POST', '/login', {params: signLogin(newWallet())})).status, 200)
      const byIp = await call(s.url, 'POST', '/login', {params: signLogin(newWallet())})
      assertError(byIp, 429, 'rate_limited')
      assert.ok(Number(byIp.headers.get('retry-after')) >= 1)
    } finally {
      await s.stop()
    }
  })

  it('answers 503 to job logins without a chain, or when the chain fails, and reads no definition for a refused one', async () => {
    const without = await startService(adapter)
    try {
      const answer = await call(without.url, 'POST', '/login', {params: signLogin(newWallet(), {job: newAddress()})})
      assertError(answer, 503, 'job_login_unavailable')
    } finally {
      await without.stop()
    }
    let definitionsRead = 0
    const job = newAddress()
    const flaky = new MemoryAuthority()
    flaky.jobs.set(job, {
      node: newAddress(),
      poster: newAddress(),
      endsAt: Math.floor(Date.now() / 1000) + 60,
      running: true,
    })
    flaky.getDefinition = async () => {
      definitionsRead++
      throw new Error('ipfs gateway timeout at 10.1.2.3')
    }
    const s = await startService(adapter, {authority: flaky})
    try {
      assertError(await call(s.url, 'POST', '/login', {params: signLogin(newWallet(), {job})}), 403, 'not_job_node')
      assert.equal(definitionsRead, 0)
      const node = newWallet()
      flaky.jobs.set(job, {...(flaky.jobs.get(job) as JobRecord), node: node.address})
      const answer = await call(s.url, 'POST', '/login', {params: signLogin(node, {job})})
      assertError(answer, 503, 'chain_unavailable')
      assert.ok(!answer.text.includes('10.1.2.3'))
      assert.equal(definitionsRead, 1)
    } finally {
      await s.stop()
    }
  })

  it('answers 500 without internals when the storage fails', async () => {
    const failing = (inner: SecretStorage): SecretStorage => ({
      ...inner,
      list: async () => {
        throw new Error('connection to db at 10.0.0.7 failed, password=hunter2')
      },
    })
    const s = await startService(adapter, {wrap: failing})
    try {
      const answer = await call(s.url, 'GET', '/secrets', {token: await login(s.url, newWallet())})
      assertError(answer, 500, 'internal')
      assert.ok(!answer.text.includes('hunter2') && !answer.text.includes('10.0.0.7'))
    } finally {
      await s.stop()
    }
  })
})
