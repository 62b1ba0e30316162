/**
 * The owner's shared vault (vault-operations.ts's sharedVault, as the network's getOrCreateVault) and the create body's
 * vault members and the withdraw body, as validation.ts reads them: the network's rules, checked without a chain.
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'

import {Keypair} from '@solana/web3.js'

import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {chooseVault, deploymentsOnVault, sharedVault} from '../../../src/lib/deployments/manager/vault-operations.js'
import {parseCreateBody, parseWithdrawBody} from '../../../src/lib/deployments/manager/validation.js'
import {vaultSeal} from '../../../src/lib/deployments/paying/vault-seal.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'

const T0 = 1_800_000_000_000

describe("the owner's shared vault", () => {
  let opened: OpenedStore
  let ctx: ManagerContext
  let now = T0

  beforeEach(async () => {
    opened = await sqliteStores.open()
    now = T0
    ctx = {
      store: opened.store,
      seal: vaultSeal(randomBytes(32)),
      now: () => now,
      log: () => {},
      env: {},
    } as unknown as ManagerContext
  })
  afterEach(() => opened.cleanup())

  it("a deployment pays from the vault it names only when it is the owner's (404 otherwise), else the shared one", async () => {
    const own = await sharedVault(ctx, 'owner-1')
    const theirs = await sharedVault(ctx, 'owner-2')
    assert.deepEqual(await chooseVault(ctx, 'owner-1', own.vault), own)
    assert.deepEqual(await chooseVault(ctx, 'owner-1', undefined), own)
    for (const named of [theirs.vault, Keypair.generate().publicKey.toBase58()]) {
      await assert.rejects(
        chooseVault(ctx, 'owner-1', named),
        (error: {status: number; code: string; message: string; hint: string}) =>
          error.status === 404 &&
          error.code === 'not_found' &&
          error.message === `no vault ${named}` &&
          /name one of your vaults \(GET \/api\/deployments\/vaults\), or leave vault out/.test(error.hint),
      )
    }
  })

  it('is made on the first ask and the same vault on every ask after', async () => {
    const first = await sharedVault(ctx, 'owner-1')
    now += 1_000
    const second = await sharedVault(ctx, 'owner-1')
    assert.deepEqual(second, first)
    assert.equal((await ctx.store.vaults('owner-1')).length, 1, 'no second vault made')
    // Its key opens: the vault signs its payments.
    assert.equal(ctx.seal.open(first.vault, first.sealed).publicKey.toBase58(), first.vault)
  })

  it("is the owner's oldest vault (ties by address), never another owner's", async () => {
    const add = async (owner: string, created_at: number) => {
      const keypair = Keypair.generate()
      const row = {vault: keypair.publicKey.toBase58(), owner, sealed: ctx.seal.seal(keypair), created_at}
      await ctx.store.addVault(row)
      return row
    }
    await add('owner-2', T0 - 10_000)
    await add('owner-1', T0 + 5_000)
    // Two of the same instant, the one of the greater address stored first: the lesser is the shared one.
    const [lesser, greater] = [Keypair.generate(), Keypair.generate()]
      .map((keypair) => keypair.publicKey.toBase58())
      .sort()
    const tie = async (vault: string) => {
      await ctx.store.addVault({vault, owner: 'owner-1', sealed: Buffer.alloc(0), created_at: T0})
    }
    await tie(greater!)
    await tie(lesser!)
    await add('owner-1', T0 + 1)
    assert.equal((await sharedVault(ctx, 'owner-1')).vault, lesser)
    assert.equal((await ctx.store.vaults('owner-1')).length, 4, 'nothing made: the owner has vaults')
    assert.equal((await sharedVault(ctx, 'owner-2')).owner, 'owner-2')
  })
})

describe('the shared vault and the deployments on a vault, whatever order a store answers in', () => {
  const row = (vault: string, created_at: number) => ({vault, owner: 'o', sealed: Buffer.alloc(0), created_at})
  const withVaults = (rows: ReturnType<typeof row>[]) =>
    ({store: {vaults: async () => rows}, now: () => T0}) as unknown as ManagerContext

  it('is the oldest, ties by the lesser address, in any order', async () => {
    const rows = [row('B', T0), row('A', T0), row('C', T0 - 1), row('0', T0 + 1)]
    // Every order of the four: the oldest (C) each time.
    const orders = [
      rows,
      [...rows].reverse(),
      [rows[2]!, rows[0]!, rows[3]!, rows[1]!],
      [rows[3]!, rows[1]!, rows[2]!, rows[0]!],
    ]
    for (const order of orders) assert.equal((await sharedVault(withVaults(order), 'o')).vault, 'C')
    for (const order of [
      [row('B', T0), row('A', T0)],
      [row('A', T0), row('B', T0)],
    ])
      assert.equal((await sharedVault(withVaults(order), 'o')).vault, 'A')
  })

  it('reads the deployments on a vault page by page, one query a page, until the total or an empty page', async () => {
    const deployments = Array.from({length: 150}, (_, i) => ({id: `d${i}`}))
    const queries: {offset: number; limit: number; vault: string; owner: string}[] = []
    const ctx = (total: number, rows = deployments) =>
      ({
        store: {
          async deployments(q: {offset: number; limit: number; vault: string; owner: string}) {
            queries.push(q)
            return {rows: rows.slice(q.offset, q.offset + q.limit), total}
          },
        },
      }) as unknown as ManagerContext
    assert.equal((await deploymentsOnVault(ctx(150), 'o', 'V')).length, 150)
    assert.deepEqual(
      queries.map((q) => [q.offset, q.limit, q.vault, q.owner]),
      [
        [0, 100, 'V', 'o'],
        [100, 100, 'V', 'o'],
      ],
    )
    queries.length = 0
    // A total beyond its rows (a store changing under it): the empty page ends the reading.
    assert.equal((await deploymentsOnVault(ctx(1_000), 'o', 'V')).length, 150)
    assert.equal(queries.length, 3)
    queries.length = 0
    assert.deepEqual(await deploymentsOnVault(ctx(0, []), 'o', 'V'), [])
    assert.equal(queries.length, 1)
  })
})

describe('the vault members of a create body', () => {
  const body = (extra: object) => ({
    name: 'svc',
    replicas: 1,
    timeout: 10,
    strategy: 'SIMPLE',
    job_definition: {version: '0.1', type: 'container', ops: []},
    ...extra,
  })
  const vault = Keypair.generate().publicKey.toBase58()

  it('takes neither (the shared vault), new_vault, or vault', () => {
    assert.deepEqual(pick(parseCreateBody(body({}), 'localnet')), {vault: undefined, new_vault: false})
    assert.deepEqual(pick(parseCreateBody(body({new_vault: true}), 'localnet')), {vault: undefined, new_vault: true})
    assert.deepEqual(pick(parseCreateBody(body({new_vault: false}), 'localnet')), {vault: undefined, new_vault: false})
    assert.deepEqual(pick(parseCreateBody(body({vault}), 'localnet')), {vault, new_vault: false})
  })

  it('refuses both at once (even new_vault: false), a new_vault that is not a boolean, a vault that is no address', () => {
    for (const [extra, code] of [
      [{vault, new_vault: true}, 'invalid_vault'],
      [{vault, new_vault: false}, 'invalid_vault'],
      [{new_vault: 'yes'}, 'invalid_new_vault'],
      [{new_vault: 1}, 'invalid_new_vault'],
      [{vault: 'not-an-address'}, 'invalid_vault'],
    ] as const) {
      assert.throws(
        () => parseCreateBody(body(extra), 'localnet'),
        (error: {status: number; code: string}) => error.status === 400 && error.code === code,
        JSON.stringify(extra),
      )
    }
  })
})

describe('the withdraw body', () => {
  it('is everything when SOL and NOS are absent, else the amounts in base units (an absent one 0)', () => {
    assert.equal(parseWithdrawBody({}), null)
    assert.deepEqual(parseWithdrawBody({SOL: 0.5}), {lamports: 500_000_000n, tokens: 0n})
    assert.deepEqual(parseWithdrawBody({NOS: 12.345678}), {lamports: 0n, tokens: 12_345_678n})
    assert.deepEqual(parseWithdrawBody({SOL: 0.000000001, NOS: 0}), {lamports: 1n, tokens: 0n})
    assert.deepEqual(parseWithdrawBody({SOL: 3, NOS: 0.1}), {lamports: 3_000_000_000n, tokens: 100_000n})
  })

  it('refuses what is not a non-negative number of at most its decimals', () => {
    for (const body of [
      {SOL: -0.1},
      {SOL: '1'},
      {SOL: null},
      {NOS: 0.0000001},
      {SOL: 0.0000000001},
      {SOL: Number.POSITIVE_INFINITY},
      {NOS: 1e10},
      {SOL: 1e7},
    ]) {
      assert.throws(
        () => parseWithdrawBody(body),
        (error: {status: number; code: string}) => error.status === 400 && /^invalid_(SOL|NOS)$/.test(error.code),
        JSON.stringify(body),
      )
    }
  })
})

function pick(request: {vault: string | undefined; new_vault: boolean}) {
  return {vault: request.vault, new_vault: request.new_vault}
}
