/**
 * The credit routes (credits/routes.ts) in this process: the deployment API's server with its authentication, a
 * credit ledger in a temporary SQLite file, and a stand-in devnet (the default market at 10 token base units a
 * second, the credits wallet funded) reached through a JSON-RPC relay that a test can make fail. What they must get
 * right is money: whose job an API key may stop or extend, what is held against whose credits, a hold kept for a job
 * that was listed whatever the send said, and one listing per Idempotency-Key.
 */
import {strict as assert} from 'node:assert'
import {createServer, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {JobsClient} from '@nosana/kit'
import {Keypair, PublicKey, type Transaction} from '@solana/web3.js'
import type Database from 'better-sqlite3'

import {CREDIT_UNITS, creditRoutes} from '../../../src/lib/credits/routes.js'
import {type CreditLedger, openCreditLedger} from '../../../src/lib/credits/ledger.js'
import {createDeploymentApi, type DeploymentApi} from '../../../src/lib/deployments/api/api.js'
import {type ApiAuth, createApiAuth} from '../../../src/lib/deployments/api/api-auth.js'
import {sqliteApiKeyRows} from '../../../src/lib/deployments/store/api-keys.js'
import {apiAuthHeaders} from '../../../src/lib/deployments/auth-header.js'
import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {walletFromBytes} from '../../../src/lib/keys/wallet.js'
import {marketNetwork} from '../../../src/lib/market/connect.js'
import {NETWORK_PRESETS} from '../../../src/lib/market/index.js'
import {resolveSettings} from '../../../src/lib/settings/settings.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'
import {JOB_CID} from '../../helpers/market.js'
import {newWallet, tempDir} from '../../helpers/secrets.js'
import {MARKET_TIMEOUT, PRICE, putJobAccount, seedNetwork} from '../../helpers/standin-network.js'
import {rpc as rpcAt} from '../../helpers/json-rpc.js'
import {startStandinRpc, type StandinRpc} from '../../helpers/standin.js'

const DEVNET = NETWORK_PRESETS.devnet
const kit = JobsClient as unknown as Record<string, Uint8Array>
/** What a listing for the market's timeout costs, in credit base units. */
const LISTING = Number(PRICE * MARKET_TIMEOUT)

/** The jobs program's instruction in a sent transaction, by its discriminator: list, extend, delist, end... */
function kindOf(tx: Transaction): string {
  const ix = tx.instructions.find((i) => i.programId.equals(DEVNET.programId))
  const head = Buffer.from(ix?.data.subarray(0, 8) ?? [])
  for (const kind of ['LIST', 'EXTEND', 'DELIST', 'END', 'STOP', 'FINISH'])
    if (kit[`${kind}_DISCRIMINATOR`] && head.equals(Buffer.from(kit[`${kind}_DISCRIMINATOR`]!)))
      return kind.toLowerCase()
  return 'other'
}

/** A JSON-RPC relay to `target` that answers 503 to the methods in `failing` (a node that went away mid-send). */
async function relay(target: string): Promise<{
  url: string
  failing: Set<string>
  /** Methods whose requests are held unanswered (a send that never returns), until `answerHeld`. */
  holding: Set<string>
  held: ServerResponse[]
  answerHeld(): void
  close(): Promise<void>
}> {
  const failing = new Set<string>()
  const holding = new Set<string>()
  const held: ServerResponse[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const {method} = JSON.parse(body) as {method: string}
      if (holding.has(method)) return void held.push(res)
      if (failing.has(method)) {
        res.writeHead(503, {'content-type': 'text/plain'})
        return void res.end('unavailable')
      }
      void fetch(target, {method: 'POST', headers: {'content-type': 'application/json'}, body}).then(async (answer) => {
        res.writeHead(answer.status, {'content-type': 'application/json'})
        res.end(await answer.text())
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    failing,
    holding,
    held,
    answerHeld() {
      holding.clear()
      for (const res of held.splice(0)) res.writeHead(503, {'content-type': 'text/plain'}).end('unavailable')
    },
    close: () => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}

/** A route's JSON answer, as much of it as the tests read (an error's or a success's: the assertions tell them). */
interface Answer {
  error: {code: string; message: string}
  tx: string
  job: string
  run: string
  delisted: boolean
  credits: {costUSD: number; creditsUsed: number; reservationId: string; project?: string}
  [member: string]: unknown
}

describe('credit routes', function () {
  this.timeout(30_000)
  let rpc: StandinRpc
  let chain: Awaited<ReturnType<typeof relay>>
  let dir: string
  let remove: () => Promise<void>
  let db: Database.Database
  let ledger: CreditLedger
  let auth: ApiAuth
  let api: DeploymentApi
  let funded: {lamports: bigint; tokens: bigint}[]
  /** Starts the routes again over the same ledger file: the API of a process started after another stopped. */
  let restarted: () => Promise<{url: string; ledger: CreditLedger; close(): Promise<void>}>
  const credits = walletFromBytes(Keypair.generate().secretKey)
  const alice = newWallet()
  const mallory = newWallet()
  let aliceKey: string
  let malloryKey: string

  beforeEach(async () => {
    rpc = await startStandinRpc()
    rpc.unitsConsumed = 20_000
    seedNetwork(rpc, 'devnet', credits.publicKey)
    chain = await relay(rpc.url)
    ;({dir, remove} = await tempDir())
    db = openSqlite(join(dir, 'manager.db'))
    ledger = openCreditLedger(join(dir, 'credits.db'))
    auth = createApiAuth({rows: sqliteApiKeyRows(db)})
    aliceKey = (await auth.apiKeys.create(alice.address)).key
    malloryKey = (await auth.apiKeys.create(mallory.address)).key
    ledger.topUp(alice.address, CREDIT_UNITS, Date.now())
    ledger.topUp(mallory.address, CREDIT_UNITS, Date.now())
    funded = []
    const net = marketNetwork(
      resolveSettings({
        network: 'devnet',
        flags: {rpcUrl: chain.url},
        env: {GPUNET_CONTENT_STORE_URL: 'http://127.0.0.1:1', XDG_CONFIG_HOME: '/nonexistent-gpunet-config'},
      }),
    )
    const fund = async (lamports: bigint, tokens: bigint) => void funded.push({lamports, tokens})
    const ctx = {network: 'devnet', log: () => {}} as unknown as ManagerContext
    api = createDeploymentApi(ctx, auth, creditRoutes({ledger, net, wallet: credits, fund}))
    await api.listen(0, '127.0.0.1')
    restarted = async () => {
      const again = openCreditLedger(join(dir, 'credits.db'))
      const server = createDeploymentApi(ctx, auth, creditRoutes({ledger: again, net, wallet: credits, fund}))
      const url = await server.listen(0, '127.0.0.1')
      return {
        url,
        ledger: again,
        async close() {
          await server.close()
          again.close()
        },
      }
    }
  })
  afterEach(async () => {
    await api.close()
    ledger.close()
    db.close()
    await chain.close()
    await rpc.close()
    await remove()
  })

  async function call(
    key: string | null,
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    options: {url?: string; signal?: AbortSignal} = {},
  ): Promise<{status: number; body: Answer; headers: Headers}> {
    const response = await fetch(`${options.url ?? api.url}${path}`, {
      signal: options.signal,
      method,
      headers: {
        ...(key ? {authorization: `Bearer ${key}`} : {}),
        ...(body === undefined ? {} : {'content-type': 'application/json'}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await response.text()
    return {
      status: response.status,
      body: text ? (JSON.parse(text) as Answer) : ({} as Answer),
      headers: response.headers,
    }
  }

  const list = (
    key: string,
    body: Record<string, unknown> = {},
    headers: Record<string, string> = {},
    options: {url?: string; signal?: AbortSignal} = {},
  ) =>
    call(
      key,
      'POST',
      '/api/jobs/list',
      {ipfsHash: JOB_CID, market: DEVNET.market!.toBase58(), ...body},
      headers,
      options,
    )
  const units = (owner: string) => ledger.balance(owner)
  const sent = () => rpc.sent.map(kindOf)

  it('answers the balance to an API key only, in credits', async () => {
    const refused = await fetch(`${api.url}/api/credits/balance`, {headers: {...apiAuthHeaders(alice)}})
    assert.equal(refused.status, 403)
    assert.equal(((await refused.json()) as {error: {code: string}}).error.code, 'api_key_required')
    assert.equal((await call(null, 'GET', '/api/credits/balance')).status, 401)
    assert.equal((await call('gpn_' + 'x'.repeat(43), 'GET', '/api/credits/balance')).status, 401)
    const balance = await call(aliceKey, 'GET', '/api/credits/balance')
    assert.deepEqual(balance, {
      status: 200,
      body: {assignedCredits: 1, reservedCredits: 0, settledCredits: 0},
      headers: balance.headers,
    })
  })

  it("lists a job from the credits wallet, holding price x timeout of the key owner's credits", async () => {
    const answer = await list(aliceKey)
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
    const {tx, job, run, credits: used} = answer.body
    assert.deepEqual(used, {
      costUSD: LISTING / CREDIT_UNITS,
      creditsUsed: LISTING / CREDIT_UNITS,
      reservationId: job,
      project: credits.address,
    })
    assert.notEqual(job, run)
    assert.deepEqual(sent(), ['list'])
    assert.equal(rpc.sent[0]!.feePayer!.toBase58(), credits.address, 'the credits wallet pays and is the project')
    assert.ok(rpc.sent[0]!.instructions.some((ix) => ix.keys.some((k) => k.pubkey.toBase58() === job)))
    assert.equal(typeof tx, 'string')
    assert.deepEqual(units(alice.address), {assigned: CREDIT_UNITS, reserved: LISTING, settled: 0})
    assert.deepEqual(units(mallory.address), {assigned: CREDIT_UNITS, reserved: 0, settled: 0})
    assert.deepEqual(ledger.job(job)!.owner, alice.address)
    assert.equal(ledger.job(job)!.tx, tx)
    const balance = await call(aliceKey, 'GET', '/api/credits/balance')
    assert.deepEqual(balance.body, {assignedCredits: 1, reservedCredits: LISTING / CREDIT_UNITS, settledCredits: 0})
    // A timeout given is what is priced.
    const short = await list(aliceKey, {timeout: 60})
    assert.equal(short.body.credits.creditsUsed, (60 * Number(PRICE)) / CREDIT_UNITS)
    assert.equal(units(alice.address).reserved, LISTING + 60 * Number(PRICE))
  })

  it('refuses a listing the free credits do not cover (402), and bad bodies (400), sending nothing', async () => {
    ledger.topUp(mallory.address, -CREDIT_UNITS + LISTING - 1, Date.now())
    const poor = await list(malloryKey)
    assert.equal(poor.status, 402, JSON.stringify(poor.body))
    assert.equal(poor.body.error.code, 'insufficient_credits')
    for (const [body, code] of [
      [{ipfsHash: 'not-a-cid'}, 'invalid_ipfs_hash'],
      [{market: 'not an address'}, 'invalid_market'],
      [{timeout: 0}, 'invalid_timeout'],
      [{timeout: 30 * 24 * 3600 + 1}, 'invalid_timeout'],
      [{timeout: 1.5}, 'invalid_timeout'],
      [{node: Keypair.generate().publicKey.toBase58()}, 'node_unsupported'],
    ] as const) {
      const answer = await list(aliceKey, body)
      assert.deepEqual([answer.status, answer.body.error?.code], [400, code], JSON.stringify(body))
    }
    assert.deepEqual(sent(), [])
    assert.deepEqual(units(alice.address).reserved, 0)
  })

  it('lists once per Idempotency-Key: the same request is answered again, another under it is 422', async () => {
    const first = await list(aliceKey, {}, {'idempotency-key': 'k-1'})
    assert.equal(first.status, 200)
    const again = await list(aliceKey, {}, {'idempotency-key': 'k-1'})
    assert.deepEqual([again.status, again.body], [200, first.body])
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    assert.deepEqual(sent(), ['list'])
    assert.equal(units(alice.address).reserved, LISTING)
    const other = await list(aliceKey, {timeout: 60}, {'idempotency-key': 'k-1'})
    assert.deepEqual([other.status, other.body.error.code], [422, 'idempotency_key_reused'])
    // Keys are the owner's own: another owner's same key is another request.
    const mallorys = await list(malloryKey, {}, {'idempotency-key': 'k-1'})
    assert.equal(mallorys.status, 200)
    assert.notEqual(mallorys.body.job, first.body.job)
    for (const bad of ['has space', 'x'.repeat(201), 'é'])
      assert.equal((await list(aliceKey, {}, {'idempotency-key': bad})).status, 400, bad)
    assert.deepEqual(sent(), ['list', 'list'])
  })

  it("refuses another owner's key to stop or extend a job: 404, nothing sent, no one's credits moved", async () => {
    const {job} = (await list(aliceKey)).body
    const before = {alice: units(alice.address), mallory: units(mallory.address)}
    const stop = await call(malloryKey, 'POST', `/api/jobs/${job}/stop`)
    assert.deepEqual([stop.status, stop.body.error?.code], [404, 'not_found'])
    const extend = await call(malloryKey, 'POST', `/api/jobs/${job}/extend`, {seconds: 600})
    assert.deepEqual([extend.status, extend.body.error?.code], [404, 'not_found'])
    assert.deepEqual(sent(), ['list'], 'neither a stop nor an extension was sent')
    assert.deepEqual({alice: units(alice.address), mallory: units(mallory.address)}, before)
    assert.equal(ledger.job(job)!.reserved, LISTING)
    assert.equal(ledger.job(job)!.settled, null, 'still open')
    // A job no credit paid for is nobody's here.
    const stranger = Keypair.generate().publicKey.toBase58()
    assert.equal((await call(aliceKey, 'POST', `/api/jobs/${stranger}/stop`)).status, 404)
  })

  it('extends the owner’s job, holding price x seconds more, and stops it: delisted, every credit back', async () => {
    const {job} = (await list(aliceKey)).body
    const extend = await call(aliceKey, 'POST', `/api/jobs/${job}/extend`, {seconds: '600'})
    assert.equal(extend.status, 200, JSON.stringify(extend.body))
    assert.deepEqual(extend.body.credits, {
      costUSD: (600 * Number(PRICE)) / CREDIT_UNITS,
      creditsUsed: (600 * Number(PRICE)) / CREDIT_UNITS,
      reservationId: job,
    })
    assert.equal(extend.body.job, job)
    assert.deepEqual(sent(), ['list', 'extend'])
    assert.equal(units(alice.address).reserved, LISTING + 600 * Number(PRICE))
    assert.equal(ledger.job(job)!.reserved, LISTING + 600 * Number(PRICE))
    for (const seconds of [0, -1, 'ten', 30 * 24 * 3600 + 1, undefined]) {
      const bad = await call(aliceKey, 'POST', `/api/jobs/${job}/extend`, {seconds})
      assert.deepEqual([bad.status, bad.body.error?.code], [400, 'invalid_seconds'], String(seconds))
    }
    const stop = await call(aliceKey, 'POST', `/api/jobs/${job}/stop`)
    assert.equal(stop.status, 200, JSON.stringify(stop.body))
    assert.deepEqual({job: stop.body.job, delisted: stop.body.delisted}, {job, delisted: true})
    assert.deepEqual(sent(), ['list', 'extend', 'delist'])
    // A queued job delisted is refunded in full: nothing reserved, nothing spent.
    assert.deepEqual(units(alice.address), {assigned: CREDIT_UNITS, reserved: 0, settled: 0})
    assert.equal(ledger.job(job)!.settled, 0)
  })

  it('keeps the hold of a listing that landed though its send failed, and lists no second job on a retry', async () => {
    // The node goes away once the listing is in: the send's confirmation is never read.
    const land = rpc.onSend
    rpc.onSend = (tx) => {
      land(tx)
      chain.failing.add('getSignatureStatuses')
    }
    const first = await list(aliceKey, {}, {'idempotency-key': 'retry-me'})
    assert.equal(first.status, 200, JSON.stringify(first.body))
    assert.deepEqual(sent(), ['list'])
    assert.equal(units(alice.address).reserved, LISTING, 'the job runs on her credits')
    assert.equal(ledger.job(first.body.job)!.reserved, LISTING)
    chain.failing.clear()
    const retry = await list(aliceKey, {}, {'idempotency-key': 'retry-me'})
    assert.deepEqual([retry.status, retry.body.job], [200, first.body.job])
    assert.deepEqual(sent(), ['list'], 'one job for one key')
    assert.equal(units(alice.address).reserved, LISTING)
  })

  it('gives the hold back when a send fails before the listing landed, and a retry lists it', async () => {
    chain.failing.add('sendTransaction')
    const failed = await list(aliceKey, {}, {'idempotency-key': 'k-2'})
    assert.deepEqual([failed.status, failed.body.error?.code], [502, 'rpc_failed'])
    assert.deepEqual(sent(), [])
    assert.equal(units(alice.address).reserved, 0)
    chain.failing.clear()
    const retry = await list(aliceKey, {}, {'idempotency-key': 'k-2'})
    assert.equal(retry.status, 200)
    assert.deepEqual(sent(), ['list'])
    assert.equal(units(alice.address).reserved, LISTING)
  })

  it('gives the hold back for a listing whose blockhash expired unlanded (503, nothing charged)', async () => {
    rpc.dropped = Infinity
    rpc.heightStep = 1000
    const expired = await list(aliceKey)
    assert.deepEqual([expired.status, expired.body.error?.code], [503, 'transaction_expired'])
    assert.deepEqual(units(alice.address), {assigned: CREDIT_UNITS, reserved: 0, settled: 0})
  })

  it('answers 409 for a job that already ended, its hold settled from the chain', async () => {
    const {job} = (await list(aliceKey)).body
    // The job's account closed without the API (it ended and was cleaned): its hold is spent.
    rpc.accounts.delete(job)
    const stop = await call(aliceKey, 'POST', `/api/jobs/${job}/stop`)
    assert.deepEqual([stop.status, stop.body.error?.code], [409, 'job_over'])
    assert.deepEqual(units(alice.address), {assigned: CREDIT_UNITS, reserved: 0, settled: LISTING})
    assert.deepEqual(sent(), ['list'])
  })

  it('settles a held job that ended on the chain when the balance is read', async () => {
    const {job} = (await list(aliceKey)).body
    // Done (state 2) without a run: never ran, so nothing is spent.
    putJobAccount(rpc, 'devnet', new PublicKey(job), {
      ipfsJob: new Uint8Array(32),
      timeout: MARKET_TIMEOUT,
      state: 2,
      payer: credits.publicKey,
    })
    const balance = await call(aliceKey, 'GET', '/api/credits/balance')
    assert.deepEqual(balance.body, {assignedCredits: 1, reservedCredits: 0, settledCredits: 0})
  })

  // A job not on the chain yet is not one that ended and was cleaned: its listing is on its way.
  it('neither charges nor gives back a listing still being sent when the balance is read meanwhile', async () => {
    chain.holding.add('sendTransaction')
    const listing = list(aliceKey)
    while (chain.held.length === 0) await sleep(10)
    let meanwhile, stop
    try {
      meanwhile = await call(aliceKey, 'GET', '/api/credits/balance')
      const [held] = ledger.openJobs(alice.address)
      stop = await call(aliceKey, 'POST', `/api/jobs/${held!.job}/stop`)
    } finally {
      // The node then fails the send, and the job never appears: nothing was bought. Awaited whatever the balance
      // said, so that no request is left for the server's close to wait on.
      chain.answerHeld()
      assert.equal((await listing).status, 502)
    }
    assert.deepEqual(meanwhile.body, {assignedCredits: 1, reservedCredits: LISTING / CREDIT_UNITS, settledCredits: 0})
    // Nor is it over: a stop meanwhile is told to come back, and settles nothing.
    assert.deepEqual([stop.status, stop.body.error?.code], [409, 'job_listing'])
    const after = await call(aliceKey, 'GET', '/api/credits/balance')
    assert.deepEqual(after.body, {assignedCredits: 1, reservedCredits: 0, settledCredits: 0})
  })

  // A process that stopped while its listing was being sent leaves the key in progress and the bytes' last valid
  // height saved: the next process asks the chain, and gives the hold back only once those bytes can no longer land.
  it("keeps a stopped process's listing held through its last valid height, and gives it up one block after", async () => {
    chain.holding.add('sendTransaction')
    const gone = new AbortController()
    const first = list(aliceKey, {}, {'idempotency-key': 'orphan'}, {signal: gone.signal}).catch(() => null)
    while (chain.held.length === 0) await sleep(10)
    // Only that send is held (its process stops there); the next ones are answered.
    chain.holding.clear()
    gone.abort()
    await first
    // The process that held the key is gone: a later process reusing its pid (a restarted container) started later.
    const file = openSqlite(join(dir, 'credits.db'))
    file.prepare("UPDATE credit_requests SET holder_start = holder_start - 1000 WHERE key = 'orphan'").run()
    file.close()
    const next = await restarted()
    try {
      const [orphan] = next.ledger.orphans()
      const lastValid = orphan!.intent!.lastValidBlockHeight
      const height = ((await rpcAt(rpc.url, 'getBlockHeight')).result as number) - 0
      assert.ok(lastValid > height, `${lastValid} > ${height}`)
      // Each height read moves the stand-in's height by this step: the sweep's one read sees the last valid height.
      rpc.heightStep = lastValid - height
      const balance = await call(aliceKey, 'GET', '/api/credits/balance', undefined, {}, {url: next.url})
      rpc.heightStep = 0
      assert.deepEqual(
        [balance.body.reservedCredits, balance.body.settledCredits],
        [LISTING / CREDIT_UNITS, 0],
        'still held, not spent: the bytes can still land',
      )
      const retry = await list(aliceKey, {}, {'idempotency-key': 'orphan'}, {url: next.url})
      assert.deepEqual([retry.status, retry.body.error?.code], [409, 'request_in_progress'])
      assert.deepEqual(sent(), [])
      // One block later they never can: the hold is given back, and the key acts again.
      rpc.heightStep = 1
      const after = await call(aliceKey, 'GET', '/api/credits/balance', undefined, {}, {url: next.url})
      rpc.heightStep = 0
      assert.deepEqual([after.body.reservedCredits, after.body.settledCredits], [0, 0], 'nothing was charged')
      const again = await list(aliceKey, {}, {'idempotency-key': 'orphan'}, {url: next.url})
      assert.equal(again.status, 200, JSON.stringify(again.body))
      assert.deepEqual(sent(), ['list'])
      assert.equal(units(alice.address).reserved, LISTING)
    } finally {
      chain.answerHeld()
      await next.close()
    }
  })
})
