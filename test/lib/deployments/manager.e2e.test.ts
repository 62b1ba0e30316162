/**
 * The deployment manager inside a real localnet, over real HTTP and a real SQLite file: a SIMPLE-EXTEND deployment
 * extended before each job's end and paid once, stop then withdraw to the last base unit, and the refusals of bad
 * input.
 */
import {strict as assert} from 'node:assert'

import {Keypair, PublicKey, Transaction} from '@solana/web3.js'
import bs58 from 'bs58'

import {apiAuthHeaders} from '../../../src/lib/deployments/auth-header.js'
import {startDeploymentManager} from '../../../src/lib/deployments/manager.js'
import {verifySignature} from '../../../src/lib/keys/ed25519.js'
import {clientMessage} from '../../../src/lib/node-api/protocol.js'
import {
  api,
  createDeployment,
  deploymentEvents,
  deploymentJobs,
  holdings,
  jobsPaidBy,
  nodeTakesNextJob,
  SERVICE_DEFINITION,
  statusWhen,
  tasksWhen,
  type Body,
  type EventJson,
  deploymentTasks,
  localnetClient,
} from '../../helpers/deployments.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {removeDir, tempDir} from '../../helpers/files.js'

const PRICE = 100n // the localnet market's token base units per second

describe('deployment manager on the localnet', function () {
  this.timeout(120_000)
  const t = useLocalnet()

  const url = () => t.ln.runtime.deploymentManager as string

  it('localnet publishes its URL', async () => {
    assert.match(url(), /^http:\/\/127\.0\.0\.1:\d+$/)
    const health = await fetch(`${url()}/health`)
    assert.equal(health.status, 200)
  })

  it('SIMPLE-EXTEND, 2 replicas, time_scale 40: each job extended before its end, each extension paid once; stop, then withdraw everything', async () => {
    const owner = t.wallet
    // 10 minutes at time_scale 40: jobs of 15 s on chain, extended by 15 s, 1.5 s before their end.
    const d = await createDeployment(url(), owner, {replicas: 2, timeout: 10, time_scale: 40})
    assert.deepEqual(Object.keys(d).sort(), [
      'active_jobs',
      'active_revision',
      'confidential',
      'created_at',
      'endpoints',
      'id',
      'market',
      'name',
      'owner',
      'replicas',
      'status',
      'strategy',
      'time_scale',
      'timeout',
      'updated_at',
      'vault',
    ])
    assert.equal(d.status, 'DRAFT')
    assert.equal(d.owner, owner.publicKey.toBase58())
    assert.equal(d.time_scale, 40)
    const vault = new PublicKey(d.vault)

    // The deposit of one timeout: 100 x 15 s x 2 tokens, plus rent and fees.
    const unfunded = await api(url(), owner, 'POST', `/api/deployments/${d.id}/start`)
    assert.equal(unfunded.status, 402, JSON.stringify(unfunded.body))
    assert.equal((await api(url(), owner, 'GET', `/api/deployments/${d.id}`)).body.status, 'INSUFFICIENT_FUNDS')

    t.ln.node.fund(vault, {lamports: 100_000_000n, tokens: 50_000n})
    const funded = await holdings(t, vault)
    const shown = await api(url(), owner, 'GET', `/api/deployments/${d.id}/vault`)
    assert.deepEqual(shown.body, {
      vault: d.vault,
      sol_lamports: Number(funded.lamports),
      token_base_units: Number(funded.tokens),
    })

    const started = await api(url(), owner, 'POST', `/api/deployments/${d.id}/start`)
    assert.equal(started.status, 200, JSON.stringify(started.body))
    assert.equal(started.body.status, 'STARTING')
    await tasksWhen(url(), owner, d.id, (tasks) => tasks.some((x) => x.task === 'LIST' && x.status === 'DONE'))
    const listed = await deploymentJobs(url(), owner, d.id)
    assert.equal(listed.length, 2)
    // The vault signs the node-API message of one of its jobs for the owner (logs), and no other message.
    const message = clientMessage('read', Keypair.generate().publicKey.toBase58(), listed[0]!.job, Date.now())
    const header = await api(
      url(),
      owner,
      'GET',
      `/api/deployments/${d.id}/header?message=${encodeURIComponent(message)}`,
    )
    const [signed, headerSignature, time] = (header.body.header as string).split(':')
    assert.equal(signed, message)
    assert.ok(verifySignature(bs58.decode(headerSignature!), Buffer.from(message), vault.toBytes()))
    assert.ok(Math.abs(Number(time) - Date.now()) < 60_000)
    const elsewhere = clientMessage('read', 'node', Keypair.generate().publicKey.toBase58(), Date.now())
    for (const refusedMessage of ['NosanaApiAuthentication', elsewhere]) {
      const refusal = await api(
        url(),
        owner,
        'GET',
        `/api/deployments/${d.id}/header?message=${encodeURIComponent(refusedMessage)}`,
      )
      assert.equal(refusal.status, 400)
      assert.equal(refusal.body.error.code, 'message_refused')
    }
    await nodeTakesNextJob(t)
    await nodeTakesNextJob(t)

    // Both extended at least once, then stopped.
    await tasksWhen(
      url(),
      owner,
      d.id,
      (tasks) => listed.every((j) => tasks.some((x) => x.task === 'EXTEND' && x.job === j.job && x.status === 'DONE')),
      45_000,
    )
    // Past the end each job was listed with, both still run.
    const starts = (await deploymentJobs(url(), owner, d.id)).map((j) => j.time_start)
    const pastFirstEnd = (Math.max(...starts) + 16) * 1000 - Date.now()
    if (pastFirstEnd > 0) await new Promise((resolve) => setTimeout(resolve, pastFirstEnd))
    const running = (await api(url(), owner, 'GET', `/api/deployments/${d.id}`)).body
    assert.equal(running.status, 'RUNNING')
    assert.equal(running.active_jobs, 2)
    assert.equal((await api(url(), owner, 'DELETE', `/api/deployments/${d.id}`)).status, 409)
    // While it runs the vault keeps its floor (shared-vault.e2e.test.ts): more than it may give is 402.
    const tooMuch = await api(url(), owner, 'POST', `/api/deployments/vaults/${d.vault}/withdraw`, {NOS: 1})
    assert.equal(tooMuch.status, 402, JSON.stringify(tooMuch.body))
    assert.equal((await api(url(), owner, 'POST', `/api/deployments/${d.id}/stop`)).body.status, 'STOPPING')
    await statusWhen(url(), owner, d.id, 'STOPPED')
    assert.equal((await api(url(), owner, 'POST', `/api/deployments/${d.id}/stop`)).status, 409)

    // At rest: every job ended; each job's timeout on chain is 15 s plus 15 s per extension recorded, once each.
    const tasks = await deploymentTasks(url(), owner, d.id)
    const events = await deploymentEvents(url(), owner, d.id)
    const jobs = await deploymentJobs(url(), owner, d.id)
    const onChain = await jobsPaidBy(t, vault)
    assert.equal(onChain.size, 2)
    let paidToNodes = 0n
    for (const row of jobs) {
      const account = onChain.get(row.job)!
      assert.ok(account, `job ${row.job} on chain`)
      // `end` of a running job leaves it done (COMPLETED), a delisted one STOPPED: over either way.
      assert.ok(['COMPLETED', 'STOPPED'].includes(row.state), row.state)
      const extensions = tasks.filter((x) => x.task === 'EXTEND' && x.job === row.job && x.status === 'DONE' && x.tx)
      assert.ok(extensions.length >= 1)
      assert.equal(account.timeout, 15n * BigInt(1 + extensions.length))
      const confirmed = events.filter((e) => e.type === 'JOB_EXTEND_SUCCESSFUL' && e.message.includes(row.job))
      assert.equal(confirmed.length, extensions.length)
      // Each extension landed before the end it postponed.
      confirmed.forEach((event, i) => {
        const end = (row.time_start + 15 * (i + 1)) * 1000
        assert.ok(Date.parse(event.created_at) <= end, `extension ${i + 1} of ${row.job} after its end`)
      })
      // The node was paid for its time only: the rest of every deposit came back to the vault.
      const ran = account.timeEnd - account.timeStart
      assert.ok(ran > 15n, `job ${row.job} ran ${ran} s, past its first timeout`)
      paidToNodes += PRICE * (ran < account.timeout ? ran : account.timeout)
    }
    const stopped = await holdings(t, vault)
    assert.equal(funded.tokens - stopped.tokens, paidToNodes)

    // Withdraw: everything back to the owner; the owner pays the fee.
    const ownerBefore = await holdings(t, owner.publicKey)
    const withdraw = await api(url(), owner, 'POST', `/api/deployments/vaults/${d.vault}/withdraw`)
    assert.equal(withdraw.status, 200, JSON.stringify(withdraw.body))
    const tx = Transaction.from(Buffer.from(withdraw.body.transaction, 'base64'))
    assert.ok(tx.feePayer?.equals(owner.publicKey))
    tx.partialSign(owner)
    const signature = await t.connection.sendRawTransaction(tx.serialize())
    await t.connection.confirmTransaction(signature, 'confirmed')
    const fee = BigInt((await t.connection.getTransaction(signature, {commitment: 'confirmed'}))!.meta!.fee)
    const ataRent = BigInt(await t.connection.getMinimumBalanceForRentExemption(165))
    const ownerAfter = await holdings(t, owner.publicKey)
    assert.deepEqual(await holdings(t, vault), {lamports: 0n, tokens: 0n})
    assert.equal(await t.connection.getAccountInfo(vault), null)
    assert.equal(ownerAfter.tokens - ownerBefore.tokens, stopped.tokens)
    assert.equal(ownerAfter.lamports - ownerBefore.lamports, stopped.lamports + ataRent - fee)
    assert.equal((await api(url(), owner, 'POST', `/api/deployments/vaults/${d.vault}/withdraw`)).status, 409)

    // Deleted: gone from the list, the vault kept.
    assert.equal((await api(url(), owner, 'DELETE', `/api/deployments/${d.id}`)).status, 204)
    assert.equal((await api(url(), owner, 'GET', `/api/deployments/${d.id}`)).status, 404)
    const vaults = (await api<{vault: string}[]>(url(), owner, 'GET', '/api/deployments/vaults')).body
    assert.ok(vaults.some((v) => v.vault === d.vault))
  })

  it('a vault that cannot pay an extension puts the deployment in INSUFFICIENT_FUNDS; funded, the extension goes through once and it runs again', async () => {
    // A manager of the test's own, whose clock is moved to the extension's due time rather than waited on (13.5 s):
    // its real poll and the real chain still decide. The extension's timing in wall time is the test above's; to the
    // millisecond, worker-clock.test.ts's.
    let skew = 0
    const dir = tempDir()
    const manager = await startDeploymentManager({
      dataDir: dir,
      net: localnetClient(t),
      network: 'localnet',
      port: 0,
      now: () => Date.now() + skew,
    })
    const url = () => manager.url
    try {
      const owner = t.wallet
      const d = await createDeployment(url(), owner, {replicas: 1, timeout: 10, time_scale: 40})
      const vault = new PublicKey(d.vault)
      // Exactly the tokens of one listing (100 x 15 s): the extension finds the vault empty.
      t.ln.node.fund(vault, {lamports: 100_000_000n, tokens: PRICE * 15n})
      assert.equal((await api(url(), owner, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
      await tasksWhen(url(), owner, d.id, (tasks) => tasks.some((x) => x.task === 'LIST' && x.status === 'DONE'))
      await nodeTakesNextJob(t)
      // Due 1.5 s before the end of its 15 s: at once, on the moved clock.
      skew += 13_500
      await statusWhen(url(), owner, d.id, 'INSUFFICIENT_FUNDS')
      const events = await deploymentEvents(url(), owner, d.id)
      assert.ok(events.some((e) => e.type === 'JOB_EXTEND_ERROR'))
      t.ln.node.fund(vault, {tokens: PRICE * 15n})
      // The retry waits the insufficient-funds cooldown (10 min / 40 = 15 s): on the moved clock, at once.
      skew += 15_000
      await statusWhen(url(), owner, d.id, 'RUNNING')
      const [extended] = await tasksWhen(url(), owner, d.id, (tasks) =>
        tasks.some((x) => x.task === 'EXTEND' && x.status === 'DONE' && x.tx),
      ).then((tasks) => tasks.filter((x) => x.task === 'EXTEND' && x.status === 'DONE' && x.tx))
      assert.ok(extended!.attempts >= 1, 'it failed first')
      assert.equal((await api(url(), owner, 'POST', `/api/deployments/${d.id}/stop`)).status, 200)
      await statusWhen(url(), owner, d.id, 'STOPPED')
      const [account] = [...(await jobsPaidBy(t, vault)).values()]
      const done = await deploymentTasks(url(), owner, d.id)
      const extensions = done.filter((x) => x.task === 'EXTEND' && x.status === 'DONE' && x.tx).length
      assert.equal(account!.timeout, 15n * BigInt(1 + extensions))
    } finally {
      await manager.close()
      removeDir(dir)
    }
  })

  describe('refusals (item 8 and authentication)', () => {
    const owner = Keypair.generate()
    const body = (change: Record<string, unknown>) => ({
      name: 'bad',
      replicas: 1,
      timeout: 10,
      strategy: 'SIMPLE',
      job_definition: SERVICE_DEFINITION,
      ...change,
    })
    const refused = async (change: Record<string, unknown>, status: number, code: string) => {
      const answer = await api(url(), owner, 'POST', '/api/deployments/create', body(change))
      assert.equal(answer.status, status, JSON.stringify(answer.body))
      assert.equal(answer.body.error.code, code)
      assert.equal(typeof answer.body.error.message, 'string')
    }

    it('no header is 401; a header signed over another message is 401; another owner’s deployment is 404', async () => {
      const none = await api(url(), null, 'GET', '/api/deployments')
      assert.equal(none.status, 401)
      const other = Keypair.generate()
      const {sign} = await import('../../../src/lib/keys/ed25519.js').then((m) => ({
        sign: (message: string) => m.signMessage(Buffer.from(message), m.signingKey(other.secretKey)!),
      }))
      const bs58 = (await import('bs58')).default
      const wrong = await fetch(`${url()}/api/deployments`, {
        headers: {
          'x-user-id': other.publicKey.toBase58(),
          authorization: `NosanaApiAuthentication:${bs58.encode(sign('NosanaSecretsLogin'))}`,
        },
      })
      assert.equal(wrong.status, 401)
      const mine = await createDeployment(url(), owner, {strategy: 'SIMPLE'})
      assert.equal((await api(url(), other, 'GET', `/api/deployments/${mine.id}`)).status, 404)
      assert.equal((await api(url(), other, 'POST', `/api/deployments/${mine.id}/start`)).status, 404)
      const listed = await api(url(), other, 'GET', '/api/deployments')
      assert.deepEqual(listed.body, {
        deployments: [],
        pagination: {cursor_next: null, cursor_prev: null, total_items: 0},
      })
    })

    it('a revoked API key is 401; an API key cannot mint keys (403)', async () => {
      const made = await api(url(), owner, 'POST', '/api/api-keys', {name: 'ci'})
      assert.equal(made.status, 201, JSON.stringify(made.body))
      const byKey = (path: string, method = 'GET') =>
        fetch(`${url()}${path}`, {method, headers: {authorization: `Bearer ${made.body.key}`}})
      assert.equal((await byKey('/api/deployments')).status, 200)
      assert.equal((await byKey('/api/api-keys', 'POST')).status, 403)
      assert.equal((await api(url(), owner, 'DELETE', `/api/api-keys/${made.body.id}`)).status, 204)
      assert.equal((await byKey('/api/deployments')).status, 401)
    })

    it('an invalid or network-refused definition is 400 and creates nothing', async () => {
      await refused({job_definition: {version: '0.1', type: 'container', ops: []}}, 400, 'invalid_definition')
      await refused({job_definition: {version: '0.1', type: 'container', ops: [{id: 'x'}]}}, 400, 'invalid_definition')
      // Valid by the spec, but nothing in the form the network's nodes take: refused as `job post` refuses it.
      await refused({job_definition: {...SERVICE_DEFINITION, meta: {flag: true}}}, 400, 'no_network_equivalent')
      const listed = await api(url(), owner, 'GET', '/api/deployments?search=bad')
      assert.equal(listed.body.pagination.total_items, 0)
    })

    it('replicas 0 or past 100 is 400; a timeout under the minute is 400; a bad strategy is 400', async () => {
      await refused({replicas: 0}, 400, 'invalid_replicas')
      await refused({replicas: 101}, 400, 'invalid_replicas')
      await refused({replicas: 1.5}, 400, 'invalid_replicas')
      await refused({timeout: 0}, 400, 'timeout_too_short')
      await refused({strategy: 'FOREVER'}, 400, 'invalid_strategy')
      // INFINITE: a timeout of 60 minutes at least, a rotation at least 10 minutes less; members of one strategy only.
      await refused({strategy: 'INFINITE'}, 400, 'timeout_too_short')
      await refused({strategy: 'INFINITE', timeout: 60, rotation_time: 3001}, 400, 'invalid_rotation_time')
      await refused({strategy: 'INFINITE', timeout: 60, startup_timeout: 60}, 400, 'invalid_startup_timeout')
      await refused({strategy: 'SIMPLE', rotation_time: 60}, 400, 'invalid_rotation_time')
      // SCHEDULED: a 5-field cron, checked by croner.
      await refused({strategy: 'SCHEDULED'}, 400, 'invalid_schedule')
      await refused({strategy: 'SCHEDULED', schedule: '* * * * * *'}, 400, 'invalid_schedule')
      await refused({strategy: 'SCHEDULED', schedule: '61 * * * *'}, 400, 'invalid_schedule')
      await refused({strategy: 'SCHEDULED', schedule: '0 0 31 2 *'}, 400, 'invalid_schedule')
      // update-schedule: SCHEDULED's only, checked as at create.
      const scheduled = await createDeployment(url(), owner, {strategy: 'SCHEDULED', schedule: '0 3 * * *'})
      assert.equal(scheduled.schedule, '0 3 * * *')
      const reschedule = (id: string, schedule: unknown) =>
        api(url(), owner, 'PATCH', `/api/deployments/${id}/update-schedule`, {schedule})
      const moved = await reschedule(scheduled.id, '*/10 * * * *')
      assert.equal(moved.status, 200, JSON.stringify(moved.body))
      assert.equal(moved.body.schedule, '*/10 * * * *')
      assert.equal((await reschedule(scheduled.id, '*/10 * * *')).body.error.code, 'invalid_schedule')
      await refused({time_scale: 0.5}, 400, 'invalid_time_scale')
      const d = await createDeployment(url(), owner, {strategy: 'SIMPLE'})
      const patch = (path: string, params: Record<string, unknown>) =>
        api(url(), owner, 'PATCH', `/api/deployments/${d.id}/${path}`, params)
      assert.equal((await patch('update-replica-count', {replicas: -1})).status, 400)
      assert.equal((await patch('update-replica-count', {replicas: 0})).body.replicas, 0, 'a scale to 0 is taken')
      assert.equal((await patch('update-replica-count', {replicas: 101})).status, 400)
      assert.equal((await patch('update-timeout', {timeout: 0})).status, 400)
      assert.deepEqual((await patch('update-replica-count', {replicas: 3})).body.replicas, 3)
    })

    it('a stop of a deployment that runs nothing is 409; a start without the deposit is 402, and funding the vault then lists nothing', async () => {
      const d = await createDeployment(url(), owner, {strategy: 'SIMPLE', replicas: 3, time_scale: 40})
      assert.equal((await api(url(), owner, 'POST', `/api/deployments/${d.id}/stop`)).status, 409)
      const start = await api(url(), owner, 'POST', `/api/deployments/${d.id}/start`)
      assert.equal(start.status, 402)
      assert.equal(start.body.error.code, 'insufficient_funds')
      t.ln.node.fund(new PublicKey(d.vault), {lamports: 100_000_000n, tokens: 50_000n})
      // Several polls of the worker (200 ms at this time_scale): the refused start stays refused until started.
      await new Promise((resolve) => setTimeout(resolve, 1500))
      assert.equal((await api(url(), owner, 'GET', `/api/deployments/${d.id}`)).body.status, 'INSUFFICIENT_FUNDS')
      assert.deepEqual(await deploymentTasks(url(), owner, d.id), [])
      assert.equal((await jobsPaidBy(t, new PublicKey(d.vault))).size, 0)
    })

    it('a body over 1 MiB is 413; a form body is 415; malformed JSON is 400', async () => {
      const headers = {...apiAuthHeaders(owner), 'content-type': 'application/json'}
      const big = JSON.stringify(body({name: 'x'.repeat(1024 * 1024)}))
      const tooLarge = await fetch(`${url()}/api/deployments/create`, {method: 'POST', headers, body: big})
      assert.equal(tooLarge.status, 413)
      const form = await fetch(`${url()}/api/deployments/create`, {
        method: 'POST',
        headers: {...headers, 'content-type': 'application/x-www-form-urlencoded'},
        body: 'name=x',
      })
      assert.equal(form.status, 415)
      const malformed = await fetch(`${url()}/api/deployments/create`, {method: 'POST', headers, body: '{'})
      assert.equal(malformed.status, 400)
      assert.equal(((await malformed.json()) as {error: {code: string}}).error.code, 'malformed_body')
    })

    it('one manager per data directory: a second is refused while the first runs, and starts once it stopped', async () => {
      const dir = tempDir()
      const first = await startDeploymentManager({dataDir: dir, net: localnetClient(t), network: 'localnet', port: 0})
      try {
        await assert.rejects(
          startDeploymentManager({dataDir: dir, net: localnetClient(t), network: 'localnet', port: 0}),
          (error: Error & {code?: string}) => error.code === 'manager_running',
        )
      } finally {
        await first.close()
      }
      const again = await startDeploymentManager({dataDir: dir, net: localnetClient(t), network: 'localnet', port: 0})
      await again.close()
      removeDir(dir)
    })

    it('time_scale is refused off the localnet (400)', async () => {
      const dir = tempDir()
      const devnet = await startDeploymentManager({dataDir: dir, net: localnetClient(t), network: 'devnet', port: 0})
      try {
        const answer = await api(devnet.url, owner, 'POST', '/api/deployments/create', body({time_scale: 10}))
        assert.equal(answer.status, 400)
        assert.equal(answer.body.error.code, 'time_scale_localnet_only')
      } finally {
        await devnet.close()
        removeDir(dir)
      }
    })

    it('refuses to listen beyond loopback without --tls-terminated', async () => {
      await assert.rejects(
        startDeploymentManager({dataDir: tempDir(), net: t.ln as never, network: 'localnet', host: '0.0.0.0'}),
        (error: Error & {code?: string}) => error.code === 'tls_required',
      )
    })
  })

  it('20 concurrent starts: one starts the deployment, the other 19 are 409 wrong_state, one DEPLOYMENT_STARTED', async () => {
    const owner = Keypair.generate()
    const d = await createDeployment(url(), owner, {strategy: 'SIMPLE'})
    t.ln.node.fund(new PublicKey(d.vault), {lamports: 100_000_000n, tokens: 1_000_000n})
    await holdings(t, new PublicKey(d.vault))
    const answers = await Promise.all(
      Array.from({length: 20}, () => api(url(), owner, 'POST', `/api/deployments/${d.id}/start`)),
    )
    const statuses = answers.map((a) => a.status).sort()
    assert.deepEqual(statuses, [200, ...Array<number>(19).fill(409)], JSON.stringify(answers.map((a) => a.body)))
    for (const refused of answers.filter((a) => a.status === 409)) assert.equal(refused.body.error.code, 'wrong_state')
    const started = (await deploymentEvents(url(), owner, d.id)).filter((e) => e.type === 'DEPLOYMENT_STARTED')
    assert.equal(started.length, 1)
    assert.equal((await api(url(), owner, 'POST', `/api/deployments/${d.id}/stop`)).status, 200)
  })

  it("the list's status filter takes a comma-separated list; /jobs and /events answer pages, as the network's API does", async () => {
    const owner = Keypair.generate()
    const draft = await createDeployment(url(), owner, {strategy: 'SIMPLE'})
    const short = await createDeployment(url(), owner, {strategy: 'SIMPLE'})
    // Twelve events: its creation, then eleven starts refused for want of the deposit.
    for (let i = 0; i < 11; i++)
      assert.equal((await api(url(), owner, 'POST', `/api/deployments/${short.id}/start`)).status, 402)
    const ids = async (status: string) =>
      (await api(url(), owner, 'GET', `/api/deployments?status=${status}`)).body.deployments.map((x) => x.id).sort()
    assert.deepEqual(await ids('DRAFT'), [draft.id])
    assert.deepEqual(await ids('DRAFT,INSUFFICIENT_FUNDS'), [draft.id, short.id].sort())
    assert.deepEqual(await ids('RUNNING,STOPPED'), [])
    const unknown = await api(url(), owner, 'GET', '/api/deployments?status=DRAFT,SOON')
    assert.equal(unknown.status, 400)
    assert.equal(unknown.body.error.code, 'invalid_status')

    type EventPage = {events: EventJson[]; pagination: Body['pagination']}
    const events = `/api/deployments/${short.id}/events`
    const first = (await api<EventPage>(url(), owner, 'GET', `${events}?limit=10&sort_order=asc`)).body
    assert.equal(first.events.length, 10)
    assert.equal(first.events[0]?.type, 'DEPLOYMENT_CREATED')
    assert.equal(first.pagination.total_items, 12)
    assert.equal(first.pagination.cursor_prev, null)
    const second = (
      await api<EventPage>(
        url(),
        owner,
        'GET',
        `${events}?limit=10&sort_order=asc&cursor=${first.pagination.cursor_next}`,
      )
    ).body
    assert.deepEqual(
      second.events.map((e) => e.type),
      ['DEPLOYMENT_INSUFFICIENT_FUNDS', 'DEPLOYMENT_INSUFFICIENT_FUNDS'],
    )
    assert.equal(second.pagination.cursor_next, null)
    // Newest first by default, as the list; filtered by type; created_after takes its own instant.
    const newest = (await api<EventPage>(url(), owner, 'GET', events)).body
    assert.equal(newest.events.length, 10)
    assert.equal(newest.events.at(-1)?.type, 'DEPLOYMENT_INSUFFICIENT_FUNDS')
    const created = (await api<EventPage>(url(), owner, 'GET', `${events}?type=DEPLOYMENT_CREATED,NOTHING`)).body
    assert.deepEqual(
      created.events.map((e) => e.type),
      ['DEPLOYMENT_CREATED'],
    )
    const last = second.events.at(-1)!
    const since = (await api<EventPage>(url(), owner, 'GET', `${events}?created_after=${last.created_at}`)).body
    assert.ok(since.events.some((e) => e.created_at === last.created_at))
    assert.equal((await api(url(), owner, 'GET', `${events}?category=Deployments`)).status, 400)

    const jobs = await api<{jobs: unknown[]; pagination: Body['pagination']}>(
      url(),
      owner,
      'GET',
      `/api/deployments/${short.id}/jobs?state=QUEUED,RUNNING`,
    )
    assert.deepEqual(jobs.body, {jobs: [], pagination: {cursor_next: null, cursor_prev: null, total_items: 0}})
    const badState = await api(url(), owner, 'GET', `/api/deployments/${short.id}/jobs?state=RUNNING,DONE`)
    assert.equal(badState.status, 400)
    assert.equal(badState.body.error.code, 'invalid_state')
  })

  it('the list pages with cursors', async () => {
    const owner = Keypair.generate()
    for (let i = 0; i < 12; i++) await createDeployment(url(), owner, {name: `page-${i}`, strategy: 'SIMPLE'})
    const first = (await api(url(), owner, 'GET', '/api/deployments?limit=10')).body
    assert.equal(first.deployments.length, 10)
    assert.equal(first.pagination.total_items, 12)
    assert.equal(first.deployments[0]?.name, 'page-11')
    const second = (await api(url(), owner, 'GET', `/api/deployments?limit=10&cursor=${first.pagination.cursor_next}`))
      .body
    assert.deepEqual(
      second.deployments.map((x) => x.name),
      ['page-1', 'page-0'],
    )
    assert.equal(second.pagination.cursor_next, null)
    assert.equal((await api(url(), owner, 'GET', '/api/deployments?limit=7')).status, 400)
    const named = (await api(url(), owner, 'GET', '/api/deployments?name=page-3')).body
    assert.deepEqual(
      named.deployments.map((x) => x.name),
      ['page-3'],
    )
    const later = (await api(url(), owner, 'GET', `/api/deployments?created_after=${named.deployments[0]?.created_at}`))
      .body
    assert.equal(later.pagination.total_items, 8)
    assert.equal((await api(url(), owner, 'GET', '/api/deployments?created_after=soon')).status, 400)
  })
})
