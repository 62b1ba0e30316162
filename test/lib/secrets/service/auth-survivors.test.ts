/**
 * Job logins and tokens of the secrets service as a client sees them (issue 26, secrets survivors), on a real
 * service whose chain is a stand-in RPC node holding accounts in the jobs program's layout, read through the
 * chain authority and its cache as `secrets serve --network` reads them: which 403 a refused node hears, the 422
 * of a definition nested too deep, the refusals of the chain and the store passed on as they are, a rate-limited
 * RPC node, how often the chain is read (docs/secrets.md: one read per job every 3 s), the token's header, and a
 * token signed with the service's key but of no scope it knows.
 */
import {PublicKey} from '@solana/web3.js'
import {decodeProtectedHeader, SignJWT} from 'jose'
import {strict as assert} from 'node:assert'
import {randomBytes, randomUUID} from 'node:crypto'

import {NETWORK_PRESETS} from '../../../../src/lib/market/index.js'
import {openConnection} from '../../../../src/lib/market/rpc/rpc.js'
import {chainJobAuthority} from '../../../../src/lib/secrets/service/chain-authority.js'
import {deriveKey} from '../../../../src/lib/secrets/service/crypto.js'
import {cachedJobAuthority} from '../../../../src/lib/secrets/service/index.js'
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
import {cidDigest, ipfsCid, startStandinRpc, type StandinRpc} from '../../../helpers/standin.js'
import {putJobAccount, putRunAccount} from '../../../helpers/standin-network.js'

type Answer = Awaited<ReturnType<typeof call>>

/** The error code of an answer, after checking its status. */
function errorCode(answer: Answer, status: number): string {
  assert.equal(answer.status, status, answer.text)
  return (answer.body as {error: {code: string}}).error.code
}

const seconds = () => Math.floor(Date.now() / 1000)
const LIMITS = {
  loginPerAddress: {limit: 1000, windowMs: 60_000},
  loginFailuresPerIp: {limit: 100_000, windowMs: 60_000},
}

describe('secrets service: job logins on a chain, and tokens', function () {
  this.timeout(30_000)
  const masterKey = randomBytes(32)
  const poster = newWallet()
  const contents = new Map<string, Uint8Array>()
  let rpc: StandinRpc
  let s: Awaited<ReturnType<typeof startService>>

  before(async () => {
    rpc = await startStandinRpc()
    const authority = chainJobAuthority({
      connection: openConnection(rpc.url),
      programId: NETWORK_PRESETS.devnet.programId,
      readContent: async (cid) => contents.get(cid) ?? null,
      settings: {rpc: '--rpc', content: '--ipfs-gateway'},
    })
    // The cache's clock stands still: its 3 s never pass during a test, however slow the machine.
    s = await startService(sqliteAdapter, {
      masterKey,
      authority: cachedJobAuthority(authority, {now: () => 0}),
      limits: LIMITS,
    })
  })
  after(async () => {
    await s?.stop()
    await rpc?.close()
  })

  /** A job of `poster` in `state` (0 Queued, 2 Done, 3 Stopped), 900 s of paid time, with a run per [node, time]. */
  async function putJob(
    state: number,
    runs: [string, number][],
    definition: Buffer | null = Buffer.from('{"version":"0.1","ops":[]}'),
  ): Promise<string> {
    const address = new PublicKey(newAddress())
    const cid = await ipfsCid(definition ?? randomBytes(16))
    if (definition) contents.set(cid, definition)
    const payer = new PublicKey(poster.address)
    putJobAccount(rpc, 'devnet', address, {ipfsJob: cidDigest(cid), timeout: 900n, state, payer})
    for (const [node, time] of runs) putRunAccount(rpc, 'devnet', address, new PublicKey(node), payer, time)
    return address.toBase58()
  }

  /** How many times the service asked the RPC node `method` about `job`. */
  const reads = (method: string, job: string) =>
    rpc.requests.filter((r) => r.method === method && JSON.stringify(r.params).includes(job)).length

  it('reads the chain once for all logins within 3 s to a job it does not hold', async () => {
    const job = newAddress()
    for (let i = 0; i < 3; i++) {
      const answer = await call(s.url, 'POST', '/login', {params: signLogin(newWallet(), {job})})
      assert.equal(errorCode(answer, 404), 'unknown_job')
    }
    assert.equal(reads('getAccountInfo', job), 1)
  })

  it("reads a running job once for its node's logins and reads within 3 s", async () => {
    const node = newWallet()
    const job = await putJob(0, [[node.address, seconds() - 10]])
    await login(s.url, node, {job})
    const token = await login(s.url, node, {job})
    assert.deepEqual((await call(s.url, 'GET', '/secrets', {token})).body, {})
    assert.equal(reads('getAccountInfo', job), 1)
    assert.equal(reads('getProgramAccounts', job), 1)
  })

  it("tells a node whose own run's paid time is over job_not_running, though another node runs the job now", async () => {
    const node = newWallet()
    const job = await putJob(0, [
      [node.address, seconds() - 1000],
      [newAddress(), seconds() - 10],
    ])
    assert.equal(
      errorCode(await call(s.url, 'POST', '/login', {params: signLogin(node, {job})}), 403),
      'job_not_running',
    )
    const stranger = signLogin(newWallet(), {job})
    assert.equal(errorCode(await call(s.url, 'POST', '/login', {params: stranger}), 403), 'not_job_node')
  })

  it('refuses a node whose claim outlived its job: Done by the finish of another claim', async () => {
    const node = newWallet()
    const job = await putJob(2, [[node.address, seconds() - 10]])
    assert.equal(
      errorCode(await call(s.url, 'POST', '/login', {params: signLogin(node, {job})}), 403),
      'job_not_running',
    )
  })

  it('answers 422 too_deep to a job login whose definition nests past 64 levels', async () => {
    const node = newWallet()
    const deep = Buffer.from(`{"version":"0.1","ops":${'['.repeat(70)}${']'.repeat(70)}}`)
    const job = await putJob(0, [[node.address, seconds() - 10]], deep)
    const answer = await call(s.url, 'POST', '/login', {params: signLogin(node, {job})})
    assert.equal(errorCode(answer, 422), 'too_deep')
  })

  it("passes on the store's 404 definition_not_found for a running job whose definition it lacks", async () => {
    const node = newWallet()
    const job = await putJob(0, [[node.address, seconds() - 10]], null)
    const answer = await call(s.url, 'POST', '/login', {params: signLogin(node, {job})})
    assert.equal(errorCode(answer, 404), 'definition_not_found')
  })

  it('answers 503 chain_unavailable with Retry-After: 5 while the RPC node answers every request 429', async () => {
    const node = newWallet()
    const job = await putJob(0, [[node.address, seconds() - 10]])
    rpc.rateLimited = Number.POSITIVE_INFINITY
    try {
      const answer = await call(s.url, 'POST', '/login', {params: signLogin(node, {job})})
      assert.equal(answer.status, 503, answer.text)
      assert.equal(answer.headers.get('retry-after'), '5')
      // The message names the setting to check, as for an RPC node that does not answer.
      assert.equal((answer.body as {error: {code: string}}).error.code, 'chain_unavailable')
      assert.match(
        (answer.body as {error: {message: string}}).error.message,
        /^the Solana RPC node http:\/\/127\.0\.0\.1:\d+\/? refuses requests \(too many requests\); check --rpc/,
      )
    } finally {
      rpc.rateLimited = 0
    }
    await login(s.url, node, {job})
  })

  it('issues tokens whose protected header is {"alg":"HS256","typ":"JWT"}', async () => {
    const token = await login(s.url, newWallet())
    assert.deepEqual(decodeProtectedHeader(token), {alg: 'HS256', typ: 'JWT'})
  })

  it('refuses 401 invalid_token a token signed with its key whose scope is neither owner nor job', async () => {
    const [node, job] = [newWallet().address, await putJob(0, [])]
    const now = seconds()
    const claims = {scope: 'admin', job, poster: poster.address, names: ['A']}
    // Signed with the service's own key, as the service signs its tokens: only the claims are ours.
    const sign = (body: Record<string, unknown>) =>
      new SignJWT(body)
        .setProtectedHeader({alg: 'HS256', typ: 'JWT'})
        .setSubject(node)
        .setIssuer('gpunet-secrets')
        .setAudience('gpunet-secrets')
        .setIssuedAt(now)
        .setJti(randomUUID())
        .setExpirationTime(now + 600)
        .sign(deriveKey(masterKey, 'login-tokens'))
    const token = await sign(claims)
    assert.equal(errorCode(await call(s.url, 'GET', '/secrets', {token}), 401), 'invalid_token')
    // The same claims with scope "job" are a token the service takes: only the scope differs.
    const jobToken = await sign({...claims, scope: 'job'})
    assert.equal(errorCode(await call(s.url, 'GET', '/secrets', {token: jobToken}), 401), 'job_ended')
  })
})

describe('secrets service: a done job listed with runs by its authority', () => {
  it('tells any other node job_not_running once the job is done, even while its authority lists a claim', async () => {
    const authority = new MemoryAuthority()
    const [job, node] = [newAddress(), newWallet()]
    authority.run(job, {node: newAddress(), poster: newAddress(), state: 'done'})
    const s = await startService(sqliteAdapter, {authority, limits: LIMITS})
    try {
      const answer = await call(s.url, 'POST', '/login', {params: signLogin(node, {job})})
      assert.equal(errorCode(answer, 403), 'job_not_running')
      authority.jobs.get(job)!.state = 'stopped'
      const stopped = await call(s.url, 'POST', '/login', {params: signLogin(node, {job})})
      assert.equal(errorCode(stopped, 403), 'not_job_node', 'the same claim of a job not done')
    } finally {
      await s.stop()
    }
  })
})
