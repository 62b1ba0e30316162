/**
 * `POST /api/deployments/vaults/:vault/withdraw` over HTTP, before a stand-in devnet holding the vault's SOL and
 * tokens (and its default market, PRICE a second): only the vault's owner gets its withdraw transaction, and it
 * leaves what the deployments paying from the vault need (the floor). The transaction sends the rest to the caller,
 * so a stranger answered one would empty the vault.
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'
import {join} from 'node:path'

import {ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {Keypair, PublicKey, SystemProgram, Transaction} from '@solana/web3.js'
import type Database from 'better-sqlite3'

import {createDeploymentApi, type DeploymentApi} from '../../../src/lib/deployments/api/api.js'
import {createApiAuth} from '../../../src/lib/deployments/api/api-auth.js'
import {sqliteApiKeyRows} from '../../../src/lib/deployments/store/api-keys.js'
import {apiAuthHeaders} from '../../../src/lib/deployments/auth-header.js'
import {checkWithdraw} from '../../../src/lib/deployments/client/client-vault.js'
import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import type {DeploymentStatus} from '../../../src/lib/deployments/types.js'
import {vaultSeal} from '../../../src/lib/deployments/paying/vault-seal.js'
import {JOB_ACCOUNT_SIZE, RUN_ACCOUNT_SIZE} from '../../../src/lib/market/codec/accounts.js'
import {marketNetwork} from '../../../src/lib/market/connect.js'
import {NETWORK_PRESETS} from '../../../src/lib/market/index.js'
import {resolveSettings} from '../../../src/lib/settings/settings.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {newWallet, tempDir} from '../../helpers/secrets.js'
import {fundWallet, rentExempt, startStandinRpc, type StandinRpc} from '../../helpers/standin.js'
import {PRICE, seedNetwork} from '../../helpers/standin-network.js'

const DEVNET = NETWORK_PRESETS.devnet
const T0 = 1_800_000_000_000

describe('deployment API: withdrawing a vault', function () {
  this.timeout(20_000)
  let rpc: StandinRpc
  let opened: OpenedStore
  let dir: string
  let remove: () => Promise<void>
  let db: Database.Database
  let api: DeploymentApi
  let ctx: ManagerContext
  const owner = newWallet()
  const stranger = newWallet()

  beforeEach(async () => {
    rpc = await startStandinRpc()
    seedNetwork(rpc, 'devnet', Keypair.generate().publicKey)
    opened = await sqliteStores.open()
    ;({dir, remove} = await tempDir())
    db = openSqlite(join(dir, 'keys.db'))
    const net = marketNetwork(
      resolveSettings({
        network: 'devnet',
        flags: {rpcUrl: rpc.url},
        env: {GPUNET_CONTENT_STORE_URL: 'http://127.0.0.1:1', XDG_CONFIG_HOME: '/nonexistent-gpunet-config'},
      }),
    )
    ctx = {
      store: opened.store,
      net,
      network: 'devnet',
      seal: vaultSeal(randomBytes(32)),
      now: () => T0,
      log: () => {},
      env: {},
    }
    api = createDeploymentApi(ctx, createApiAuth({rows: sqliteApiKeyRows(db), now: () => Date.now()}))
    await api.listen(0, '127.0.0.1')
  })
  afterEach(async () => {
    await api.close()
    db.close()
    await opened.cleanup()
    await remove()
    await rpc.close()
  })

  /** A vault of `owner` holding SOL and tokens on the chain; with `status`, a deployment paying from it. */
  async function vaultOf(status?: DeploymentStatus, startedAt: number | null = T0): Promise<string> {
    const keypair = Keypair.generate()
    const vault = keypair.publicKey.toBase58()
    const row = {vault, owner: owner.address, sealed: ctx.seal.seal(keypair), created_at: T0}
    const id = `dep-${randomBytes(4).toString('hex')}`
    if (status === undefined) await ctx.store.addVault(row)
    else
      await ctx.store.createDeployment(
        {
          id,
          name: 'svc',
          owner: owner.address,
          vault,
          market: DEVNET.market!.toBase58(),
          status,
          replicas: 1,
          timeout: 10,
          strategy: 'SIMPLE',
          time_scale: 1,
          confidential: false,
          active_revision: 1,
          started_at: startedAt,
          created_at: T0,
          updated_at: T0,
        },
        {deployment: id, revision: 1, ipfs_definition_hash: 'Qm1', job_definition: '{}', created_at: T0},
        row,
      )
    fundWallet(rpc, keypair.publicKey, DEVNET.mint!, 7_000_000, 3_000_000n)
    return vault
  }

  /** Another deployment of `owner` paying from `vault` (a shared vault's second). */
  async function alsoOn(vault: string, status: DeploymentStatus): Promise<string> {
    const id = `dep-${randomBytes(4).toString('hex')}`
    await ctx.store.createDeployment(
      {
        id,
        name: 'svc',
        owner: owner.address,
        vault,
        market: DEVNET.market!.toBase58(),
        status,
        replicas: 2,
        timeout: 20,
        strategy: 'SIMPLE-EXTEND',
        time_scale: 1,
        confidential: false,
        active_revision: 1,
        started_at: T0,
        created_at: T0,
        updated_at: T0,
      },
      {deployment: id, revision: 1, ipfs_definition_hash: 'Qm1', job_definition: '{}', created_at: T0},
      null,
    )
    return id
  }

  /** The kinds of a withdraw transaction's instructions, in order. */
  const kinds = (transaction: string) =>
    Transaction.from(Buffer.from(transaction, 'base64')).instructions.map((ix) => {
      if (ix.programId.equals(SystemProgram.programId)) return 'sol'
      if (ix.programId.equals(TOKEN_PROGRAM_ID)) return ix.data[0] === 9 ? 'close' : 'tokens'
      if (ix.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID)) return 'owner-token-account'
      return ix.programId.toBase58()
    })

  async function withdraw(who: ReturnType<typeof newWallet>, vault: string, body: object = {}) {
    const response = await fetch(`${api.url}/api/deployments/vaults/${vault}/withdraw`, {
      method: 'POST',
      headers: {...apiAuthHeaders(who), 'content-type': 'application/json'},
      body: JSON.stringify(body),
    })
    return {
      status: response.status,
      body: (await response.json()) as {transaction?: string; error?: {code: string; message: string}},
    }
  }

  it("answers the owner a transaction that sends the vault's SOL and tokens to the owner", async () => {
    const vault = await vaultOf()
    const answer = await withdraw(owner, vault)
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
    const {plan} = checkWithdraw(
      answer.body.transaction!,
      new PublicKey(owner.address),
      new PublicKey(vault),
      DEVNET.mint!,
      0n,
    )
    assert.deepEqual({lamports: plan.lamports, tokens: plan.tokens}, {lamports: 7_000_000n, tokens: 3_000_000n})
  })

  it("refuses a stranger another owner's vault, 404 as for a vault that does not exist, without reading it", async () => {
    for (const status of [undefined, 'STOPPED', 'RUNNING'] as const) {
      const vault = await vaultOf(status)
      rpc.requests.length = 0
      const answer = await withdraw(stranger, vault)
      assert.deepEqual([answer.status, answer.body.error?.code], [404, 'not_found'], `vault of a ${status} deployment`)
      assert.equal(answer.body.transaction, undefined)
      assert.match(answer.body.error!.message, new RegExp(`vault ${vault}`))
      assert.deepEqual(rpc.requests, [], 'nothing of the vault is read for a stranger')
    }
    const nowhere = await withdraw(stranger, Keypair.generate().publicKey.toBase58())
    assert.equal(nowhere.status, 404)
  })

  /** What a withdraw's transaction moves, as the owner's check reads it. */
  const planOf = (transaction: string, vault: string) => {
    const {plan} = checkWithdraw(transaction, new PublicKey(owner.address), new PublicKey(vault), DEVNET.mint!, 0n)
    return {lamports: plan.lamports, tokens: plan.tokens, closes: plan.closes.length}
  }
  // One replica of 10 minutes at PRICE a second; a listing's rents and three signatures, a stop's one; the vault's rent.
  const listing = BigInt(rentExempt(JOB_ACCOUNT_SIZE) + rentExempt(RUN_ACCOUNT_SIZE)) + 15_000n + 5_000n
  const vaultRent = BigInt(rentExempt(0))

  it('leaves what a deployment paying from the vault needs next, and gives a stopped one everything', async () => {
    for (const status of ['RUNNING', 'STARTING', 'INSUFFICIENT_FUNDS'] as const) {
      const vault = await vaultOf(status)
      const answer = await withdraw(owner, vault)
      assert.equal(answer.status, 200, `${status}: ${JSON.stringify(answer.body)}`)
      assert.deepEqual(
        planOf(answer.body.transaction!, vault),
        {lamports: 7_000_000n - listing - vaultRent, tokens: 3_000_000n - PRICE * 600n, closes: 0},
        `${status}: the floor stays, the token account too`,
      )
    }
    // Stopping, it only stops its job: one signature, and the vault's rent.
    const stopping = await vaultOf('STOPPING')
    const answer = await withdraw(owner, stopping)
    assert.deepEqual(planOf(answer.body.transaction!, stopping), {
      lamports: 7_000_000n - 5_000n - vaultRent,
      tokens: 3_000_000n,
      closes: 0,
    })
    // A start refused for want of the deposit lists nothing: nothing is kept for it.
    for (const [status, started] of [
      ['STOPPED', T0],
      ['ERROR', T0],
      ['DRAFT', null],
      ['INSUFFICIENT_FUNDS', null],
    ] as const) {
      const vault = await vaultOf(status, started)
      const all = await withdraw(owner, vault)
      assert.equal(all.status, 200, `${status}: ${JSON.stringify(all.body)}`)
      assert.deepEqual(planOf(all.body.transaction!, vault), {lamports: 7_000_000n, tokens: 3_000_000n, closes: 1})
    }
  })

  it('takes exactly the SOL and NOS asked, up to what the vault may give; one base unit more is 402, nothing signed', async () => {
    const vault = await vaultOf('RUNNING')
    const asked = await withdraw(owner, vault, {SOL: 0.001, NOS: 1.5})
    assert.equal(asked.status, 200, JSON.stringify(asked.body))
    assert.deepEqual(planOf(asked.body.transaction!, vault), {lamports: 1_000_000n, tokens: 1_500_000n, closes: 0})
    // Only NOS: no SOL moved.
    const tokens = await withdraw(owner, vault, {NOS: 2.994})
    assert.deepEqual(planOf(tokens.body.transaction!, vault), {lamports: 0n, tokens: 2_994_000n, closes: 0})
    const over = await withdraw(owner, vault, {NOS: 2.994001})
    assert.equal(over.status, 402, JSON.stringify(over.body))
    assert.equal(over.body.error?.code, 'withdraw_exceeds_available')
    assert.match(over.body.error!.message, /may give 2994000 token base units/)
    assert.match(over.body.error!.message, /for the next listing or extension of every replica of dep-/)
    assert.equal(over.body.transaction, undefined)
    const sol = await withdraw(owner, vault, {SOL: Number(7_000_000n - listing - vaultRent + 1n) / 1e9})
    assert.equal(sol.status, 402, JSON.stringify(sol.body))
  })

  it('refuses amounts that are not non-negative numbers of at most their decimals, and a remainder under the rent', async () => {
    const vault = await vaultOf('STOPPED')
    for (const body of [{SOL: -1}, {SOL: '0.1'}, {NOS: 0.0000001}, {SOL: 1e-10}, {NOS: null}]) {
      const answer = await withdraw(owner, vault, body)
      assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`)
      assert.match(answer.body.error!.code, /^invalid_(SOL|NOS)$/)
    }
    const under = await withdraw(owner, vault, {SOL: 0.00699})
    assert.equal(under.status, 400, JSON.stringify(under.body))
    assert.equal(under.body.error?.code, 'withdraw_under_rent')
  })

  it('keeps the floor of every deployment on a shared vault, and names them when it may give nothing', async () => {
    const vault = await vaultOf('RUNNING')
    const [first] = (await ctx.store.deployments({owner: owner.address, vault, offset: 0, limit: 10, order: 'asc'}))
      .rows
    const second = await alsoOn(vault, 'RUNNING')
    await alsoOn(vault, 'STOPPED')
    fundWallet(rpc, new PublicKey(vault), DEVNET.mint!, 20_000_000, 3_000_000n)
    // 600 s x 1 replica and 1,200 s x 2 replicas at PRICE; three listings' SOL; the vault's rent once.
    const tokens = PRICE * 600n + PRICE * 1_200n * 2n
    const answer = await withdraw(owner, vault)
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
    assert.deepEqual(planOf(answer.body.transaction!, vault), {
      lamports: 20_000_000n - listing * 3n - vaultRent,
      tokens: 3_000_000n - tokens,
      closes: 0,
    })
    const over = await withdraw(owner, vault, {NOS: Number(3_000_000n - tokens + 1n) / 1e6})
    assert.equal(over.status, 402)
    // Both, in the store's order (the same instant: either first).
    const named = over.body.error!.message.split('every replica of ')[1]
    assert.ok(named === `${first!.id}, ${second}` || named === `${second}, ${first!.id}`, named)
    assert.match(JSON.stringify(over.body), /ask at most that much, or leave SOL and NOS out to take all of it/)

    // A vault its deployments need all of: 409, naming them, and how to get the rest.
    fundWallet(rpc, new PublicKey(vault), DEVNET.mint!, 1_000, 1_000n)
    const nothing = await withdraw(owner, vault)
    assert.equal(nothing.status, 409, JSON.stringify(nothing.body))
    assert.match(nothing.body.error!.message, /holds nothing it may give: it keeps \d+ token base units/)
    assert.match(JSON.stringify(nothing.body), /stop its deployments to withdraw the rest/)
  })

  it('moves only what it takes: no token instruction for SOL alone, no SOL one for tokens alone, no empty transfer', async () => {
    const running = await vaultOf('RUNNING')
    const sol = await withdraw(owner, running, {SOL: 0.001})
    assert.deepEqual(kinds(sol.body.transaction!), ['sol'])
    const tokens = await withdraw(owner, running, {NOS: 0.5})
    assert.deepEqual(kinds(tokens.body.transaction!), ['owner-token-account', 'tokens'])
    assert.deepEqual(kinds((await withdraw(owner, running)).body.transaction!), [
      'owner-token-account',
      'tokens',
      'sol',
    ])
    const idle = await vaultOf('STOPPED')
    assert.deepEqual(kinds((await withdraw(owner, idle)).body.transaction!), [
      'owner-token-account',
      'tokens',
      'close',
      'sol',
    ])
    // An idle vault whose token account is empty: closed (its rent to the owner), no transfer of 0 tokens.
    fundWallet(rpc, new PublicKey(idle), DEVNET.mint!, 7_000_000, 0n)
    assert.deepEqual(kinds((await withdraw(owner, idle)).body.transaction!), ['owner-token-account', 'close', 'sol'])
    // All of an idle vault's tokens, none of its SOL: the account goes, no transfer of 0 lamports.
    fundWallet(rpc, new PublicKey(idle), DEVNET.mint!, 7_000_000, 5n)
    assert.deepEqual(kinds((await withdraw(owner, idle, {NOS: 0.000005})).body.transaction!), [
      'owner-token-account',
      'tokens',
      'close',
    ])
  })

  it("says why a remainder under the vault's rent is refused", async () => {
    const under = await withdraw(owner, await vaultOf('STOPPED'), {SOL: 0.00699})
    assert.equal(under.status, 400)
    assert.match(under.body.error!.message, new RegExp(`under its rent-exempt minimum of ${vaultRent} lamports`))
    assert.match(JSON.stringify(under.body), /withdraw all of its SOL \(leave SOL out\) or leave it at least that much/)
  })

  it('refuses the owner a vault that holds nothing', async () => {
    const keypair = Keypair.generate()
    const vault = keypair.publicKey.toBase58()
    await ctx.store.addVault({vault, owner: owner.address, sealed: ctx.seal.seal(keypair), created_at: T0})
    rpc.set(keypair.publicKey, {owner: SystemProgram.programId, lamports: 0, data: Buffer.alloc(0)})
    const answer = await withdraw(owner, vault)
    assert.equal(answer.status, 409)
    assert.match(
      answer.body.error!.message,
      new RegExp(`vault ${vault} holds nothing it may give: nothing pays from it$`),
    )
  })
})
