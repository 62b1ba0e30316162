/** The secrets service over HTTP, the same suites on each storage. */
import {AuthorizationManager} from '@nosana/sdk'
import {Keypair} from '@solana/web3.js'
import bs58 from 'bs58'
import {decodeJwt, decodeProtectedHeader, SignJWT} from 'jose'
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'

import {type JobRecord, TokenIssuer} from '../../../../src/lib/secrets/service/auth.js'
import {deriveKey} from '../../../../src/lib/secrets/service/crypto.js'
import {DEFAULT_LIMITS} from '../../../../src/lib/secrets/service/server.js'
import {type SecretStorage, StorageBusyError} from '../../../../src/lib/secrets/service/storage.js'
import {
  type Adapter,
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
function assertError(answer: {status: number; body: unknown}, status: number, code: string): string {
  assert.equal(answer.status, status, JSON.stringify(answer.body))
  const body = answer.body as {error: {code: string; message: string}}
  assert.deepEqual(Object.keys(body), ['error'])
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message'])
  assert.equal(body.error.code, code)
  assert.ok(body.error.message.length > 0)
  return body.error.message
}

/** The service's HTTP suites on each of `adapters`: SQLite in server.test.ts, PostgreSQL in server-postgres.e2e.test.ts. */
export function secretsServiceSuites(adapters: Adapter[]): void {
  forEachAdapter(
    'secrets service',
    (adapter) => {
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
            loginFailuresPerIp: {limit: 100_000, windowMs: 60_000},
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
              await call(s.url, 'POST', '/login', {
                encoding,
                params: {...signLogin(newWallet()), address: 'not-base58!'},
              }),
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
        // The same key in both agrees.
        assert.equal((await call(s.url, 'DELETE', '/secrets?key=B', {token, params: {key: 'B'}})).status, 200)
        assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {})
      })

      it('keeps owners apart', async () => {
        const alice = await login(s.url, newWallet())
        const bob = await login(s.url, newWallet())
        await call(s.url, 'POST', '/secrets', {token: alice, params: {secrets: {SHARED_NAME: 'alice'}}})
        await call(s.url, 'POST', '/secrets', {token: bob, params: {secrets: {SHARED_NAME: 'bob'}}})
        assert.deepEqual((await call(s.url, 'GET', '/secrets', {token: alice})).body, {SHARED_NAME: 'alice'})
        assert.deepEqual((await call(s.url, 'GET', '/secrets', {token: bob})).body, {SHARED_NAME: 'bob'})
      })

      it('answers health, naming the host its bound login message names', async () => {
        const answer = await call(s.url, 'GET', '/health')
        assert.equal(answer.status, 200)
        assert.deepEqual(answer.body, {status: 'ok', login: {hosts: [new URL(s.url).host]}})
      })

      it('accepts the login message bound to its host, once, and refuses one bound to another service', async () => {
        const host = new URL(s.url).host
        const params = signLogin(newWallet(), {prefix: `gpunet_secret_${host}_`})
        assert.equal((await call(s.url, 'POST', '/login', {params})).status, 200)
        assertError(await call(s.url, 'POST', '/login', {params}), 401, 'replayed_signature')
        const elsewhere = signLogin(newWallet(), {prefix: 'gpunet_secret_127.0.0.1:1_'})
        const refused = await call(s.url, 'POST', '/login', {params: elsewhere})
        assert.match(
          assertError(refused, 401, 'invalid_signature'),
          new RegExp(`or gpunet_secret_${host}_\\d+ signed by`),
        )
      })

      describe('login', () => {
        const now = () => Math.floor(Date.now() / 1000)

        it('refuses a replayed signature', async () => {
          const params = signLogin(newWallet())
          assert.equal((await call(s.url, 'POST', '/login', {params})).status, 200)
          assertError(await call(s.url, 'POST', '/login', {params}), 401, 'replayed_signature')
          assertError(await call(s.url, 'POST', '/login', {params, encoding: 'form'}), 401, 'replayed_signature')
        })

        it("accepts the network's message too, each signature once under either message", async () => {
          for (const prefix of ['service_secret_', 'nosana_secret_']) {
            const params = signLogin(newWallet(), {prefix})
            assert.equal((await call(s.url, 'POST', '/login', {params})).status, 200, prefix)
            assertError(await call(s.url, 'POST', '/login', {params}), 401, 'replayed_signature')
            assertError(await call(s.url, 'POST', '/login', {params, encoding: 'form'}), 401, 'replayed_signature')
          }
          // Signed by the network's official SDK, as its clients sign for the networks' services.
          const keypair = Keypair.generate()
          const timestamp = now()
          const signed = await new AuthorizationManager(keypair).generate(`nosana_secret_${timestamp}`)
          const params = {address: keypair.publicKey.toBase58(), signature: signed.split(':')[1]!, timestamp}
          assert.equal((await call(s.url, 'POST', '/login', {params})).status, 200)
          assertError(await call(s.url, 'POST', '/login', {params}), 401, 'replayed_signature')
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
          const foreign = new TokenIssuer(randomBytes(32)).issue(
            newWallet().address,
            {kind: 'owner', owner: 'x'},
            Math.floor(Date.now() / 1000) + 60,
            Math.floor(Date.now() / 1000),
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
          const expired = new TokenIssuer(deriveKey(masterKey, 'login-tokens')).issue(
            wallet.address,
            {kind: 'owner', owner: wallet.address},
            Math.floor(Date.now() / 1000) - 5,
            Math.floor(Date.now() / 1000) - 65,
          )
          assertError(await call(s.url, 'GET', '/secrets', {token: expired}), 401, 'token_expired')
        })
      })

      describe('job tokens', () => {
        const poster = newWallet()
        const node = newWallet()
        const job = newAddress()
        let posterToken: string

        /** Puts a job run by `node` for `poster` on the test chain, its paid time ending in ten minutes unless told. */
        function addJob(address: string, options: {seconds?: number; state?: JobRecord['state']} = {}): JobRecord {
          return authority.run(address, {
            node: node.address,
            poster: poster.address,
            definition: DEFINITION,
            ...options,
          })
        }
        const DEFINITION = {
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
        }

        before(async () => {
          posterToken = await login(s.url, poster)
          await call(s.url, 'POST', '/secrets', {
            token: posterToken,
            params: {secrets: {HF_TOKEN: 'hf', DB_PASS: 'db', UNREFERENCED: 'never'}},
          })
          addJob(job)
        })

        it('reads exactly the referenced secrets of the poster, until the job ends', async () => {
          const token = await login(s.url, node, {job})
          assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {DB_PASS: 'db', HF_TOKEN: 'hf'})
          const record = authority.jobs.get(job) as JobRecord
          assert.ok((decodeJwt(token).exp as number) <= (record.runs[0]?.time as number) + record.timeout)
        })

        it('is given for a login signed with either message, each signature once', async () => {
          for (const prefix of ['service_secret_', 'nosana_secret_']) {
            const params = signLogin(node, {job, prefix})
            const answer = await call(s.url, 'POST', '/login', {params})
            assert.equal(answer.status, 200, prefix)
            const {token} = answer.body as {token: string}
            assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {DB_PASS: 'db', HF_TOKEN: 'hf'})
            assertError(await call(s.url, 'POST', '/login', {params}), 401, 'replayed_signature')
            assertError(
              await call(s.url, 'POST', '/login', {params: {...params, job: undefined}}),
              401,
              'replayed_signature',
            )
          }
        })

        it('lives no longer than the job has left', async () => {
          const shortJob = newAddress()
          const record = addJob(shortJob, {seconds: 90})
          assert.equal(
            decodeJwt(await login(s.url, node, {job: shortJob})).exp,
            (record.runs[0]?.time as number) + 3600,
          )
        })

        it('dies with its job: refused with job_ended once the job is done, stopped without its run, or its run closed', async () => {
          for (const end of [
            (r: JobRecord) => (r.state = 'done'),
            (r: JobRecord) => {
              r.state = 'stopped'
              r.runs = []
            },
            (r: JobRecord) => (r.runs = [{node: newAddress(), time: Math.floor(Date.now() / 1000)}]),
          ]) {
            const dying = newAddress()
            const record = addJob(dying)
            const token = await login(s.url, node, {job: dying})
            assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {DB_PASS: 'db', HF_TOKEN: 'hf'})
            end(record)
            assertError(await call(s.url, 'GET', '/secrets', {token}), 401, 'job_ended')
          }
        })

        it('is given for a stopped job that this node claimed again, among several runs', async () => {
          const claimed = newAddress()
          const record = addJob(claimed, {state: 'stopped'})
          record.runs.unshift({node: newAddress(), time: Math.floor(Date.now() / 1000)})
          const token = await login(s.url, node, {job: claimed})
          assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {DB_PASS: 'db', HF_TOKEN: 'hf'})
        })

        it('can neither write nor delete', async () => {
          const token = await login(s.url, node, {job})
          assertError(
            await call(s.url, 'POST', '/secrets', {token, params: {secrets: {HF_TOKEN: 'overwritten'}}}),
            403,
            'read_only_token',
          )
          assertError(
            await call(s.url, 'DELETE', '/secrets', {token, params: {key: 'HF_TOKEN'}}),
            403,
            'read_only_token',
          )
          assert.equal(
            ((await call(s.url, 'GET', '/secrets', {token: posterToken})).body as Record<string, string>).HF_TOKEN,
            'hf',
          )
        })

        it('is refused to another node, for an unknown job and for a job that is not running', async () => {
          assertError(await call(s.url, 'POST', '/login', {params: signLogin(newWallet(), {job})}), 403, 'not_job_node')
          assertError(
            await call(s.url, 'POST', '/login', {params: signLogin(node, {job: newAddress()})}),
            404,
            'unknown_job',
          )
          const done = newAddress()
          addJob(done, {state: 'done'})
          assertError(
            await call(s.url, 'POST', '/login', {params: signLogin(node, {job: done})}),
            403,
            'job_not_running',
          )
          const ended = newAddress()
          addJob(ended, {seconds: -1})
          assertError(
            await call(s.url, 'POST', '/login', {params: signLogin(node, {job: ended})}),
            403,
            'job_not_running',
          )
          const waiting = newAddress()
          addJob(waiting).runs = []
          assertError(
            await call(s.url, 'POST', '/login', {params: signLogin(node, {job: waiting})}),
            403,
            'job_not_running',
          )
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
            ['/secrets', 'secrets=%ZZ%', form, 400, 'malformed_body'],
            ['/secrets', 'secrets=%7B%22A%22%3A%22%FF%22%7D', form, 400, 'malformed_body'],
            ['/secrets', 'secrets=%7B%22A%22%3A%22%ED%A0%80%22%7D', form, 400, 'malformed_body'],
            ['/secrets', '{"secrets": {"A": "\\ud800"}}', json, 400, 'invalid_value'],
            ['/secrets', '{"secrets": {"A": "x\\udc00y"}}', json, 400, 'invalid_value'],
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
        await s.storage.put(bob.address, [{name: 'TOKEN', sealed: sealed.sealed}], DEFAULT_LIMITS)
        await s.storage.put(alice.address, [{name: 'OTHER', sealed: sealed.sealed}], DEFAULT_LIMITS)
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
    },
    adapters,
  )

  forEachAdapter(
    'secrets service rate limits',
    (adapter) => {
      it('keeps room for a new owner elsewhere when one IP stores for 50 throwaway owners', async () => {
        // Room for 20 owners of 1 kB; one IP may add 10 an hour.
        const s = await startService(adapter, {
          trustProxy: true,
          limits: {totalBytes: 20 * 1100, newOwnersPerIp: {limit: 10, windowMs: 3_600_000}},
        })
        try {
          const from = (ip: string) => ({'x-forwarded-for': ip})
          const write = async (ip: string) => {
            const wallet = newWallet()
            const token = ((await call(s.url, 'POST', '/login', {params: signLogin(wallet)})).body as {token: string})
              .token
            const params = {secrets: {KEY: 'x'.repeat(1000)}}
            return call(s.url, 'POST', '/secrets', {token, params, headers: from(ip)})
          }
          const throwaway = await Promise.all(Array.from({length: 50}, () => write('203.0.113.7')))
          assert.equal(throwaway.filter((a) => a.status === 200).length, 10)
          const refused = throwaway.find((a) => a.status !== 200) as Awaited<ReturnType<typeof write>>
          assert.match(assertError(refused, 429, 'too_many_new_owners'), /too many new owners .* retry in \d+ s/)
          assert.ok(Number(refused.headers.get('retry-after')) > 0)
          assert.equal((await write('198.51.100.1')).status, 200)
        } finally {
          await s.stop()
        }
      })

      it('on loopback counts new owners per owner: 100 throwaway owners leave every other local user room (issue 61)', async () => {
        // The default allowance, as a localnet runs it: every local user shares 127.0.0.1.
        const s = await startService(adapter, {limits: {newOwnersPerIp: DEFAULT_LIMITS.newOwnersPerIp}})
        try {
          const first = async (wallet = newWallet()) => {
            const token = ((await call(s.url, 'POST', '/login', {params: signLogin(wallet)})).body as {token: string})
              .token
            return call(s.url, 'POST', '/secrets', {token, params: {secrets: {KEY: 'x'}}})
          }
          const throwaway = await Promise.all(Array.from({length: DEFAULT_LIMITS.newOwnersPerIp.limit}, () => first()))
          assert.deepEqual(new Set(throwaway.map((a) => a.status)), new Set([200]))
          const alice = await first()
          assert.equal(alice.status, 200, `another local user's first secret: ${alice.text}`)
        } finally {
          await s.stop()
        }
      })

      it('limits valid logins per address and failed logins per client IP, never successes per IP', async () => {
        const s = await startService(adapter, {
          limits: {loginPerAddress: {limit: 3, windowMs: 60_000}, loginFailuresPerIp: {limit: 5, windowMs: 60_000}},
          // A client at 203.0.113.9 (through X-Forwarded-For): failures count per IP only for clients beyond loopback.
          trustProxy: true,
        })
        const stranger = {headers: {'x-forwarded-for': '203.0.113.9'}}
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
          // Many successes from one IP: never limited by it.
          for (let i = 0; i < 12; i++)
            assert.equal(
              (await call(s.url, 'POST', '/login', {params: signLogin(newWallet()), ...stranger})).status,
              200,
            )
          // Bad logins naming someone else's address do not use up that address's allowance.
          const victim = newWallet()
          const forged = {...signLogin(newWallet()), address: victim.address}
          for (let i = 0; i < 5; i++)
            assertError(await call(s.url, 'POST', '/login', {params: forged, ...stranger}), 401, 'invalid_signature')
          const byIp = await call(s.url, 'POST', '/login', {params: signLogin(newWallet()), ...stranger})
          assertError(byIp, 429, 'rate_limited')
          assert.ok(Number(byIp.headers.get('retry-after')) >= 1)
          // Another client is not held back by that IP's failures.
          assert.equal((await call(s.url, 'POST', '/login', {params: signLogin(newWallet())})).status, 200)
          // An exempt address (the localnet's node) still logs in from that IP.
          s.service.exemptFromLoginLimits(victim.address)
          for (let i = 0; i < 5; i++)
            assert.equal(
              (await call(s.url, 'POST', '/login', {params: signLogin(victim, {timestamp: now - i}), ...stranger}))
                .status,
              200,
            )
        } finally {
          await s.stop()
        }
      })

      it('on loopback counts failed logins per claimed address: 101 failures lock out that address alone (issue 42)', async () => {
        const s = await startService(adapter)
        try {
          const mallory = newWallet()
          const forged = () => ({...signLogin(newWallet()), address: mallory.address})
          for (let i = 0; i < 100; i++)
            assertError(await call(s.url, 'POST', '/login', {params: forged()}), 401, 'invalid_signature')
          // Malformed logins name nobody: not counted, and never a lock-out of anyone.
          for (let i = 0; i < 120; i++)
            assertError(await call(s.url, 'POST', '/login', {params: {address: 'x'}}), 400, 'invalid_address')
          assertError(await call(s.url, 'POST', '/login', {params: forged()}), 429, 'rate_limited')
          // Every other local user still logs in, and a failure of theirs is their own.
          const alice = newWallet()
          assert.equal((await call(s.url, 'POST', '/login', {params: signLogin(alice)})).status, 200)
          const bob = newWallet()
          assertError(
            await call(s.url, 'POST', '/login', {params: {...signLogin(newWallet()), address: bob.address}}),
            401,
            'invalid_signature',
          )
          assert.equal((await call(s.url, 'POST', '/login', {params: signLogin(bob)})).status, 200)
        } finally {
          await s.stop()
        }
      })

      it('accepts a timestamp exactly 60 s old or ahead and refuses 61 s', async () => {
        const pinned = Date.UTC(2030, 0, 1, 12, 0, 0, 500)
        const s = await startService(adapter, {now: () => pinned})
        try {
          const now = Math.floor(pinned / 1000)
          const wallet = newWallet()
          for (const offset of [-60, 60])
            assert.equal(
              (await call(s.url, 'POST', '/login', {params: signLogin(wallet, {timestamp: now + offset})})).status,
              200,
              `offset ${offset}`,
            )
          for (const offset of [-61, 61])
            assertError(
              await call(s.url, 'POST', '/login', {params: signLogin(wallet, {timestamp: now + offset})}),
              401,
              'stale_timestamp',
            )
        } finally {
          await s.stop()
        }
      })

      it('refuses a JSON body that is not UTF-8, and a lone surrogate in a form value', async () => {
        const s = await startService(adapter)
        try {
          const token = await login(s.url, newWallet())
          const body = Buffer.concat([
            Buffer.from('{"secrets": {"A": "'),
            Buffer.from([0xff, 0xfe]),
            Buffer.from('"}}'),
          ])
          const answer = await fetch(`${s.url}/secrets`, {
            method: 'POST',
            headers: {authorization: `Bearer ${token}`, 'content-type': 'application/json'},
            body,
          })
          assert.equal(answer.status, 400)
          assert.equal(((await answer.json()) as {error: {code: string}}).error.code, 'malformed_body')
          assertError(
            await call(s.url, 'POST', '/secrets', {token, encoding: 'form', params: {secrets: '{"A": "\\ud83d"}'}}),
            400,
            'invalid_value',
          )
          assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {})
        } finally {
          await s.stop()
        }
      })

      it('holds each owner to its bytes and secrets, and the whole store to its total, with stable codes', async () => {
        // A secret occupies its name plus its value plus 29 bytes (nonce, tag, format).
        const s = await startService(adapter, {limits: {bytesPerOwner: 1000, secretsPerOwner: 3, totalBytes: 2500}})
        try {
          const alice = await login(s.url, newWallet())
          const put = (token: string, secrets: Record<string, string>) =>
            call(s.url, 'POST', '/secrets', {token, params: {secrets}})
          assert.equal((await put(alice, {A: 'x'.repeat(970)})).status, 200) // 1 + 970 + 29 = 1000
          assertError(await put(alice, {B: ''}), 413, 'owner_quota_exceeded')
          // Replacing counts the new size only.
          assert.equal((await put(alice, {A: 'x'.repeat(900)})).status, 200)
          assert.equal((await put(alice, {B: 'b', C: 'c'})).status, 200)
          assertError(await put(alice, {D: 'd'}), 400, 'too_many_secrets')
          const bob = await login(s.url, newWallet())
          assert.equal((await put(bob, {A: 'y'.repeat(900)})).status, 200)
          const carol = await login(s.url, newWallet())
          assertError(await put(carol, {A: 'z'.repeat(600)}), 413, 'storage_full')
          assert.equal((await call(s.url, 'DELETE', '/secrets', {token: bob, params: {key: 'A'}})).status, 200)
          assert.equal((await put(carol, {A: 'z'.repeat(600)})).status, 200, 'a delete frees room in the total')
          assert.deepEqual(Object.keys((await call(s.url, 'GET', '/secrets', {token: alice})).body as object), [
            'A',
            'B',
            'C',
          ])
        } finally {
          await s.stop()
        }
      })

      it('refuses tokens without exp and tokens whose claims have the wrong types, with 401', async () => {
        const masterKey = randomBytes(32)
        const s = await startService(adapter, {masterKey})
        try {
          const key = deriveKey(masterKey, 'login-tokens')
          const owner = newWallet().address
          const now = Math.floor(Date.now() / 1000)
          const sign = (claims: Record<string, unknown>, exp: number | null = now + 60) => {
            const jwt = new SignJWT(claims)
              .setProtectedHeader({alg: 'HS256'})
              .setIssuer('gpunet-secrets')
              .setAudience('gpunet-secrets')
              .setIssuedAt(now)
              .setJti('x')
            return (exp === null ? jwt : jwt.setExpirationTime(exp)).sign(key)
          }
          assert.equal(
            (await call(s.url, 'GET', '/secrets', {token: await sign({sub: owner, scope: 'owner'})})).status,
            200,
            'the forged-with-the-key baseline is accepted',
          )
          const job = newAddress()
          const bad: Array<Record<string, unknown>> = [
            {sub: 12345, scope: 'owner'},
            {sub: ['x'], scope: 'owner'},
            {sub: 'not-base58-!', scope: 'owner'},
            {sub: owner, scope: 'admin'},
            {sub: owner, scope: 'job', job, poster: owner, names: 'HF_TOKEN'},
            {sub: owner, scope: 'job', job, poster: owner, names: [1, 2]},
            {sub: owner, scope: 'job', job: 7, poster: owner, names: []},
            {sub: owner, scope: 'job', job, poster: {}, names: []},
          ]
          for (const claims of bad) {
            assertError(await call(s.url, 'GET', '/secrets', {token: await sign(claims)}), 401, 'invalid_token')
          }
          assertError(
            await call(s.url, 'GET', '/secrets', {token: await sign({sub: owner, scope: 'owner'}, null)}),
            401,
            'invalid_token',
          )
          assertError(
            await call(s.url, 'GET', '/secrets', {token: await sign({sub: owner, scope: 'owner', exp: 'soon'}, null)}),
            401,
            'invalid_token',
          )
        } finally {
          await s.stop()
        }
      })

      it('answers 503 to job logins without a chain, or when the chain fails, and reads no definition for a refused one', async () => {
        const without = await startService(adapter)
        try {
          const answer = await call(without.url, 'POST', '/login', {
            params: signLogin(newWallet(), {job: newAddress()}),
          })
          assertError(answer, 503, 'job_login_unavailable')
        } finally {
          await without.stop()
        }
        let definitionsRead = 0
        const job = newAddress()
        const flaky = new MemoryAuthority()
        const record = flaky.run(job, {node: newAddress(), poster: newAddress()})
        flaky.getDefinition = async () => {
          definitionsRead++
          throw new Error('ipfs gateway timeout at 10.1.2.3')
        }
        const s = await startService(adapter, {authority: flaky})
        try {
          assertError(await call(s.url, 'POST', '/login', {params: signLogin(newWallet(), {job})}), 403, 'not_job_node')
          assert.equal(definitionsRead, 0)
          const node = newWallet()
          record.runs = [{node: node.address, time: Math.floor(Date.now() / 1000)}]
          const answer = await call(s.url, 'POST', '/login', {params: signLogin(node, {job})})
          assert.equal(
            assertError(answer, 503, 'chain_unavailable'),
            'the chain or the job definition could not be read; try again',
          )
          // A node retries on its own: the answer says when.
          assert.equal(answer.headers.get('retry-after'), '5')
          assert.ok(!answer.text.includes('10.1.2.3'))
          assert.equal(definitionsRead, 1)
        } finally {
          await s.stop()
        }
      })

      it('answers 503 storage_busy with Retry-After when the database stays busy', async () => {
        const busy = (inner: SecretStorage): SecretStorage => ({
          ...inner,
          put: async () => {
            throw new StorageBusyError()
          },
        })
        const s = await startService(adapter, {wrap: busy})
        try {
          const token = await login(s.url, newWallet())
          const answer = await call(s.url, 'POST', '/secrets', {token, params: {secrets: {A: '1'}}})
          assert.match(assertError(answer, 503, 'storage_busy'), /^the database is busy with other writers; try again$/)
          assert.equal(answer.headers.get('retry-after'), '1')
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
    },
    adapters,
  )
}
