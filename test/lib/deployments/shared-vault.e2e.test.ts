/**
 * The owner's shared vault on a real localnet, over raw HTTP (`@nosana/api` 2.1.8 is the conformance test's): made
 * once and answered again by `vaults/create`, the default of a create, `new_vault` for one of a deployment's own,
 * `vault` naming one of the owner's (404 for another's); two deployments funded once, both listing; a start the
 * shared vault cannot add to its running deployments (402 naming them); a withdraw while one runs leaving its floor
 * (it goes on running and extending); more than the vault may give refused, nothing moved.
 */
import {strict as assert} from 'node:assert'

import {Keypair, PublicKey, Transaction} from '@solana/web3.js'

import {JOB_ACCOUNT_SIZE, RUN_ACCOUNT_SIZE} from '../../../src/lib/market/codec/accounts.js'
import {
  api,
  type Body,
  deploymentEvents,
  deploymentJobs,
  holdings,
  jobsPaidBy,
  nodeTakesNextJob,
  SERVICE_DEFINITION,
  statusWhen,
} from '../../helpers/deployments.js'
import {eventually} from '../../helpers/eventually.js'
import {fundedKeypair, useLocalnet} from '../../helpers/localnet.js'

const PRICE = 100n // the localnet market's token base units per second
/** 10 minutes at time_scale 20: jobs of 30 s, extended 3 s before their end. */
const TIMEOUT = 10
const SCALE = 20
const JOB_SECONDS = 30n

describe("the owner's shared vault on the localnet", function () {
  this.timeout(180_000)
  const t = useLocalnet()
  const url = () => t.ln.runtime.deploymentManager as string

  /** A create exactly as sent: no vault member unless the test gives one. */
  async function create(owner: Keypair, extra: Record<string, unknown>) {
    return api(url(), owner, 'POST', '/api/deployments/create', {
      name: 'svc',
      replicas: 1,
      timeout: TIMEOUT,
      time_scale: SCALE,
      strategy: 'SIMPLE-EXTEND',
      job_definition: SERVICE_DEFINITION,
      ...extra,
    })
  }
  const made = async (owner: Keypair, extra: Record<string, unknown>): Promise<Body> => {
    const answer = await create(owner, extra)
    assert.equal(answer.status, 201, JSON.stringify(answer.body))
    return answer.body
  }

  it('vaults/create gets or makes it; creates use it unless new_vault or vault say otherwise', async () => {
    const owner = Keypair.generate()
    const first = await api(url(), owner, 'POST', '/api/deployments/vaults/create')
    assert.equal(first.status, 200, JSON.stringify(first.body))
    // The network's answer ({vault, owner, created_at}), which @nosana/api reads as `data.vault`, `data.created_at`.
    assert.deepEqual(Object.keys(first.body).sort(), ['created_at', 'owner', 'vault'])
    assert.equal(first.body.owner, owner.publicKey.toBase58())
    assert.ok(!Number.isNaN(Date.parse(first.body.created_at as string)))
    const second = await api(url(), owner, 'POST', '/api/deployments/vaults/create')
    assert.deepEqual(second.body, first.body, 'twice: the same vault')
    const shared = first.body.vault

    assert.equal((await made(owner, {})).vault, shared, 'no vault member: the shared vault')
    assert.equal((await made(owner, {new_vault: false})).vault, shared)
    const own = await made(owner, {new_vault: true})
    assert.notEqual(own.vault, shared)
    assert.equal((await made(owner, {vault: own.vault})).vault, own.vault, 'vault names one of the owner')
    const vaults = (await api<{vault: string}[]>(url(), owner, 'GET', '/api/deployments/vaults')).body
    assert.deepEqual(vaults.map((v) => v.vault).sort(), [shared, own.vault].sort())
    // vaults/create still answers the oldest, not the newest.
    assert.equal((await api(url(), owner, 'POST', '/api/deployments/vaults/create')).body.vault, shared)

    // Another owner's vault is not found, as an unknown one; both members at once are refused; nothing is created.
    const stranger = Keypair.generate()
    for (const vault of [shared, Keypair.generate().publicKey.toBase58()]) {
      const refused = await create(stranger, {vault})
      assert.equal(refused.status, 404, JSON.stringify(refused.body))
      assert.equal(refused.body.error.code, 'not_found')
    }
    const both = await create(owner, {vault: shared, new_vault: true})
    assert.equal(both.status, 400)
    assert.equal(both.body.error.code, 'invalid_vault')
    assert.equal((await api(url(), stranger, 'GET', '/api/deployments')).body.pagination.total_items, 0)
    assert.equal((await api(url(), stranger, 'GET', '/api/deployments/vaults')).body.length, 0)
    assert.equal((await api(url(), owner, 'GET', '/api/deployments')).body.pagination.total_items, 4)
  })

  it('two deployments funded once both list; a withdraw while one runs leaves its floor and it goes on extending', async () => {
    const owner = await fundedKeypair(t, 1)
    const a = await made(owner, {name: 'a'})
    const b = await made(owner, {name: 'b', strategy: 'SIMPLE'})
    assert.equal(a.vault, b.vault)
    const vault = new PublicKey(a.vault)

    // Funded once, for both.
    t.ln.node.fund(vault, {lamports: 100_000_000n, tokens: 50_000n})
    for (const d of [a, b]) {
      const started = await api(url(), owner, 'POST', `/api/deployments/${d.id}/start`)
      assert.equal(started.status, 200, JSON.stringify(started.body))
    }
    const jobs = await eventually('both listed', 30_000, async () => {
      const listed = [await deploymentJobs(url(), owner, a.id), await deploymentJobs(url(), owner, b.id)]
      return listed.every((l) => l.length === 1) ? listed.flat() : undefined
    })
    const paid = await jobsPaidBy(t, vault)
    assert.deepEqual([...paid.keys()].sort(), jobs.map((j) => j.job).sort(), 'both jobs paid from the shared vault')
    await nodeTakesNextJob(t)
    await nodeTakesNextJob(t)
    await statusWhen(url(), owner, a.id, 'RUNNING')

    // A third start the vault cannot add to the two it pays for: 402, naming them; it lists nothing.
    const big = await made(owner, {name: 'big', replicas: 20})
    const refused = await api(url(), owner, 'POST', `/api/deployments/${big.id}/start`)
    assert.equal(refused.status, 402, JSON.stringify(refused.body))
    assert.equal(refused.body.error.code, 'insufficient_funds')
    assert.match(refused.body.error.message, /a shared vault must cover all of them/)
    assert.ok(refused.body.error.message.includes(a.id) && refused.body.error.message.includes(b.id))

    // b stops; a runs on.
    await api(url(), owner, 'POST', `/api/deployments/${b.id}/stop`)
    await statusWhen(url(), owner, b.id, 'STOPPED')

    // Right after one of a's extensions (the next is 30 s away), so nothing else pays from the vault meanwhile.
    const extensions = async () =>
      (await deploymentEvents(url(), owner, a.id)).filter((e) => e.type === 'JOB_EXTEND_SUCCESSFUL').length
    const seen = await extensions()
    await eventually('an extension of a', 45_000, async () => ((await extensions()) > seen ? true : undefined))

    // More than the vault may give: 402, nothing signed, nothing moved.
    const ownerBefore = await holdings(t, owner.publicKey)
    const held = await holdings(t, vault)
    const over = await api(url(), owner, 'POST', `/api/deployments/vaults/${a.vault}/withdraw`, {
      NOS: Number(held.tokens) / 1e6,
    })
    assert.equal(over.status, 402, JSON.stringify(over.body))
    assert.equal(over.body.error.code, 'withdraw_exceeds_available')
    assert.equal(over.body.transaction, undefined)
    assert.deepEqual(await holdings(t, vault), held, 'nothing moved from the vault')
    assert.deepEqual(await holdings(t, owner.publicKey), ownerBefore, 'nothing moved to the owner')

    // Everything it may give: the floor of a's one replica stays (its next extension or listing, a stop's fee, the
    // vault's rent); b, stopped, and big, never started, keep nothing.
    const rent = async (size: number) => BigInt(await t.connection.getMinimumBalanceForRentExemption(size))
    const floor = {
      lamports: (await rent(JOB_ACCOUNT_SIZE)) + (await rent(RUN_ACCOUNT_SIZE)) + 15_000n + 5_000n + (await rent(0)),
      tokens: PRICE * JOB_SECONDS,
    }
    const withdraw = await api(url(), owner, 'POST', `/api/deployments/vaults/${a.vault}/withdraw`)
    assert.equal(withdraw.status, 200, JSON.stringify(withdraw.body))
    const tx = Transaction.from(Buffer.from(withdraw.body.transaction, 'base64'))
    tx.partialSign(owner)
    const signature = await t.connection.sendRawTransaction(tx.serialize())
    await t.connection.confirmTransaction(signature, 'confirmed')
    assert.deepEqual(await holdings(t, vault), floor, 'the floor stays in the vault')
    assert.equal((await holdings(t, owner.publicKey)).tokens - ownerBefore.tokens, held.tokens - floor.tokens)

    // a goes on: its next extension is paid from the floor, and it still runs.
    const after = await extensions()
    await eventually('an extension of a after the withdraw', 45_000, async () =>
      (await extensions()) > after ? true : undefined,
    )
    const running = (await api(url(), owner, 'GET', `/api/deployments/${a.id}`)).body
    assert.equal(running.status, 'RUNNING')
    assert.equal(running.active_jobs, 1)
    assert.equal((await holdings(t, vault)).tokens, 0n, "the extension took the floor's tokens")

    // Stopped, the vault may give all that is left.
    await api(url(), owner, 'POST', `/api/deployments/${a.id}/stop`)
    await statusWhen(url(), owner, a.id, 'STOPPED')
    const last = await api(url(), owner, 'POST', `/api/deployments/vaults/${a.vault}/withdraw`)
    assert.equal(last.status, 200, JSON.stringify(last.body))
    const lastTx = Transaction.from(Buffer.from(last.body.transaction, 'base64'))
    lastTx.partialSign(owner)
    await t.connection.confirmTransaction(await t.connection.sendRawTransaction(lastTx.serialize()), 'confirmed')
    assert.deepEqual(await holdings(t, vault), {lamports: 0n, tokens: 0n})
  })
})
