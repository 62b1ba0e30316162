import {strict as assert} from 'node:assert'
import {createServer, type IncomingHttpHeaders} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'

import {createNosanaAuthorization} from '@nosana/authorization'
import {createNosanaClient, NosanaNetwork} from '@nosana/kit'
import {createKeyPairSignerFromBytes} from '@solana/kit'
import type Database from 'better-sqlite3'
import bs58 from 'bs58'

import {base58Decoder} from '../../../src/lib/text/base58-text.js'
import {type ApiAuth, createApiAuth} from '../../../src/lib/deployments/api/api-auth.js'
import type {RequestHeaders} from '../../../src/lib/http/request-headers.js'
import {sqliteApiKeyRows} from '../../../src/lib/deployments/store/api-keys.js'
import {API_AUTH_MESSAGE, apiAuthHeaders} from '../../../src/lib/deployments/auth-header.js'
import {ExitCode, GpunetError} from '../../../src/lib/errors.js'
import {signHeader} from '../../../src/lib/node-api/protocol.js'
import {forgedSmallOrderSignature} from '../../helpers/ed25519.js'
import {newWallet, signLogin, tempDir} from '../../helpers/secrets.js'
import {restoreSdkPresets} from '../../helpers/sdk-presets.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'

/** The headers the network's kit sends to a deployments API at `backend_url`, caught by a real HTTP server. */
async function kitHeaders(secretKey: Uint8Array): Promise<IncomingHttpHeaders> {
  let caught: IncomingHttpHeaders | undefined
  const server = createServer((req, res) => {
    caught = req.headers
    res.writeHead(200, {'content-type': 'application/json'}).end('{"deployments":[],"total_items":0}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const kit = createNosanaClient(NosanaNetwork.MAINNET, {
      wallet: await createKeyPairSignerFromBytes(secretKey),
      api: {backend_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`},
    } as Parameters<typeof createNosanaClient>[1])
    restoreSdkPresets()
    await kit.api.deployments.list().catch(() => undefined)
  } finally {
    server.close()
  }
  assert.ok(caught, 'the kit sent no request')
  return caught
}

/** Refused with exit code 6 and this error code, and nothing secret in the message or the hint. */
async function refusedWith(auth: ApiAuth, headers: RequestHeaders, code: string, secrets: string[] = []) {
  const error = await auth.authenticate(headers).then(
    () => assert.fail(`accepted ${JSON.stringify(headers)}`),
    (e: unknown) => e,
  )
  assert.ok(error instanceof GpunetError, String(error))
  assert.equal(error.exitCode, ExitCode.DENIED)
  assert.equal(error.code, code, error.message)
  assert.ok(error.hint, 'a refusal carries a hint')
  for (const secret of secrets) {
    assert.ok(!error.message.includes(secret) && !error.hint.includes(secret), `${code} echoes a secret`)
  }
}

describe('deployment API authentication', () => {
  let db: Database.Database
  let remove: () => Promise<void>
  let nowMs: number
  let auth: ApiAuth

  beforeEach(async () => {
    const temp = await tempDir()
    remove = temp.remove
    db = openSqlite(join(temp.dir, 'manager.db'))
    nowMs = Date.now()
    auth = createApiAuth({rows: sqliteApiKeyRows(db), now: () => nowMs})
  })
  afterEach(async () => {
    db.close()
    await remove()
  })

  it("accepts the header the network's kit sends (no time part: a lasting credential), for days", async () => {
    const wallet = newWallet()
    const headers = await kitHeaders(wallet.bytes)
    assert.equal(headers['x-user-id'], wallet.address)
    assert.match(headers.authorization!, /^NosanaApiAuthentication:[1-9A-HJ-NP-Za-km-z]{80,88}$/)
    assert.deepEqual(await auth.authenticate(headers), {owner: wallet.address, via: 'wallet'})
    nowMs += 30 * 24 * 3600 * 1000
    assert.deepEqual(await auth.authenticate(headers), {owner: wallet.address, via: 'wallet'})
  })

  it("accepts @nosana/authorization's header with a time part for 300 s, then refuses it as expired", async () => {
    const wallet = newWallet()
    const header = await createNosanaAuthorization(wallet.bytes).generate(API_AUTH_MESSAGE, {includeTime: true})
    const time = Number(header.split(':')[2])
    assert.ok(Math.abs(time - Date.now()) < 10_000, header)
    nowMs = time
    const headers = {'x-user-id': wallet.address, authorization: header}
    assert.deepEqual(await auth.authenticate(headers), {owner: wallet.address, via: 'wallet'})
    nowMs = time + 299_999
    assert.deepEqual(await auth.authenticate(headers), {owner: wallet.address, via: 'wallet'})
    nowMs = time + 300_000
    await refusedWith(auth, headers, 'auth_expired')
    // A time part ahead of the clock: a minute is allowed, more is refused.
    nowMs = time - 60_000
    assert.deepEqual(await auth.authenticate(headers), {owner: wallet.address, via: 'wallet'})
    nowMs = time - 60_001
    await refusedWith(auth, headers, 'auth_future')
  })

  it("makes headers (auth-header.ts) the server and the kit's own validator accept", async () => {
    const wallet = newWallet()
    const timed = apiAuthHeaders(wallet, {nowMs})
    assert.match(timed.authorization, new RegExp(`^NosanaApiAuthentication:\\w+:${nowMs}$`))
    const lasting = apiAuthHeaders(wallet.keypair(), {timed: false})
    assert.equal(lasting.authorization.split(':').length, 2)
    for (const headers of [timed, lasting]) {
      assert.deepEqual(await auth.authenticate(headers), {owner: wallet.address, via: 'wallet'})
      assert.equal(
        createNosanaAuthorization().validate(headers.authorization, wallet.publicKey.toBytes(), {
          expected_message: API_AUTH_MESSAGE,
        }),
        true,
      )
    }
    // The kit signs the same bytes: ed25519 is deterministic, so the signatures are equal.
    const kit = await createNosanaAuthorization(wallet.bytes).generate(API_AUTH_MESSAGE)
    assert.equal(lasting.authorization, kit)
  })

  it('takes a timed header stripped of its time part as the lasting credential (the time part is not signed)', async () => {
    // docs/deployment-api-auth.md says so: this pins the kit's format, it is no feature.
    const wallet = newWallet()
    const timed = apiAuthHeaders(wallet, {nowMs: nowMs - 3_600_000})
    await refusedWith(auth, timed, 'auth_expired')
    const stripped = {...timed, authorization: timed.authorization.split(':').slice(0, 2).join(':')}
    assert.deepEqual(await auth.authenticate(stripped), {owner: wallet.address, via: 'wallet'})
  })

  it('refuses signatures of any other message by the same wallet, with or without a time part', async () => {
    const wallet = newWallet()
    const node = newWallet().address
    const job = newWallet().address
    // A node-API header of gpunet's client, and the network CLI's node message.
    const nodeApi = signHeader((m) => wallet.sign(m), {action: 'read', node, job}, nowMs)
    await refusedWith(auth, {'x-user-id': wallet.address, authorization: nodeApi}, 'auth_wrong_message')
    const [nodeMessage, nodeSignature] = nodeApi.split(':')
    assert.ok(nodeMessage && nodeSignature)
    const networkCli = `Hello Nosana Node!:${bs58.encode(wallet.sign(Buffer.from('Hello Nosana Node!')))}`
    await refusedWith(auth, {'x-user-id': wallet.address, authorization: networkCli}, 'auth_wrong_message')
    // A secrets login signature.
    const login = signLogin(wallet)
    const loginMessage = `service_secret_${login.timestamp}`
    await refusedWith(
      auth,
      {'x-user-id': wallet.address, authorization: `${loginMessage}:${login.signature}`},
      'auth_wrong_message',
    )
    // Each of those signatures (and one over an arbitrary text) put under NosanaApiAuthentication.
    const arbitrary = bs58.encode(wallet.sign(Buffer.from('NosanaApiAuthentication ')))
    for (const signature of [nodeSignature, login.signature as string, arbitrary]) {
      for (const time of ['', `:${nowMs}`]) {
        const authorization = `${API_AUTH_MESSAGE}:${signature}${time}`
        await refusedWith(auth, {'x-user-id': wallet.address, authorization}, 'auth_bad_signature', [signature])
      }
    }
    // The message compared exactly: case, spaces and a prefix of it.
    const exact = apiAuthHeaders(wallet, {timed: false}).authorization.split(':')[1]!
    for (const message of ['nosanaApiAuthentication', ' NosanaApiAuthentication', 'NosanaApi']) {
      await refusedWith(auth, {'x-user-id': wallet.address, authorization: `${message}:${exact}`}, 'auth_wrong_message')
    }
  })

  it("refuses another wallet's x-user-id, and a missing one", async () => {
    const wallet = newWallet()
    const other = newWallet()
    const {authorization} = apiAuthHeaders(wallet, {nowMs})
    await refusedWith(auth, {'x-user-id': other.address, authorization}, 'auth_bad_signature')
    await refusedWith(auth, {authorization}, 'auth_missing')
    await refusedWith(auth, {'x-user-id': wallet.address}, 'auth_missing')
    // A small-order key, whose "signatures" anyone can forge without a private key.
    const identity = new Uint8Array(32)
    identity[0] = 1
    const forged = bs58.encode(forgedSmallOrderSignature(identity, Buffer.from(API_AUTH_MESSAGE)))
    const forgedHeaders = {'x-user-id': bs58.encode(identity), authorization: `${API_AUTH_MESSAGE}:${forged}`}
    await refusedWith(auth, forgedHeaders, 'auth_bad_signature')
    await refusedWith(auth, {}, 'auth_missing')
  })

  it('refuses malformed and oversized headers before decoding them', async () => {
    const wallet = newWallet()
    const good = apiAuthHeaders(wallet, {nowMs})
    const [, signature, time] = good.authorization.split(':') as [string, string, string]
    const cases: Array<[RequestHeaders, string]> = [
      [{...good, authorization: `${API_AUTH_MESSAGE}:${signature}:${time}:1`}, 'auth_malformed'],
      [{...good, authorization: `${API_AUTH_MESSAGE}:`}, 'auth_malformed'],
      [{...good, authorization: `${API_AUTH_MESSAGE}:${signature}0OIl`}, 'auth_malformed'],
      [{...good, authorization: `${API_AUTH_MESSAGE}:${signature.slice(0, 40)}`}, 'auth_malformed'],
      [{...good, authorization: `${API_AUTH_MESSAGE}:${'z'.repeat(88)}`}, 'auth_malformed'],
      [{...good, authorization: `${API_AUTH_MESSAGE}:${signature}:soon`}, 'auth_malformed'],
      [{...good, authorization: `${API_AUTH_MESSAGE}:${signature}:${'9'.repeat(17)}`}, 'auth_malformed'],
      [{...good, authorization: `${API_AUTH_MESSAGE}:${signature}:-5`}, 'auth_malformed'],
      [{...good, authorization: `${API_AUTH_MESSAGE}:${'2'.repeat(200_000)}`}, 'auth_malformed'],
      [{...good, 'x-user-id': '2'.repeat(200_000)}, 'auth_malformed'],
      [{...good, 'x-user-id': 'not-base58!'}, 'auth_malformed'],
      [{...good, 'x-user-id': wallet.address.slice(0, 30)}, 'auth_malformed'],
      [{...good, authorization: [good.authorization, good.authorization]}, 'auth_malformed'],
      [{...good, Authorization: good.authorization}, 'auth_malformed'],
      [{...good, 'x-user-id': [wallet.address, newWallet().address]}, 'auth_malformed'],
    ]
    for (const [headers, code] of cases) await refusedWith(auth, headers, code, [signature])
    // Headers in another case are read as node:http would have lowercased them.
    assert.deepEqual(await auth.authenticate({'X-User-Id': wallet.address, AUTHORIZATION: good.authorization}), {
      owner: wallet.address,
      via: 'wallet',
    })
  })

  it('decodes nothing of an oversized header', async () => {
    const decode = base58Decoder.decode
    let decoded = 0
    base58Decoder.decode = (text) => {
      decoded++
      return decode(text)
    }
    try {
      const big = '2'.repeat(200_000)
      await refusedWith(auth, {'x-user-id': big, authorization: `${API_AUTH_MESSAGE}:${big}`}, 'auth_malformed')
      await refusedWith(auth, {'x-user-id': newWallet().address, authorization: `Bearer gpn_${big}`}, 'auth_malformed')
      await refusedWith(
        auth,
        {'x-user-id': big, authorization: apiAuthHeaders(newWallet()).authorization},
        'auth_malformed',
      )
      assert.equal(decoded, 0)
      // The counter works: a well-formed header is decoded (its address and signature).
      await auth.authenticate(apiAuthHeaders(newWallet()))
      assert.equal(decoded, 2)
    } finally {
      base58Decoder.decode = decode
    }
  })
})
