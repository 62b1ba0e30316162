/**
 * The manager's routes as the network's manager of 2026 has them (issue 54), on a real localnet over raw HTTP: every
 * route driven for real under `/deployments` and under `/api/deployments` (a deployment of each spelling's own, the
 * same steps, the same answers); Prometheus `/metrics` moving as a deployment is created, started and a task fails,
 * with nothing secret in it; `duplicate` with the source's settings, vault and active revision, its refusals, and
 * `gpunet deployment duplicate` through the built CLI.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {Keypair, PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'

import {apiAuthHeaders} from '../../../src/lib/deployments/auth-header.js'
import {startDeploymentManager} from '../../../src/lib/deployments/manager.js'
import {runManagerCli} from '../../helpers/cli.js'
import {
  api,
  type Body,
  localnetClient,
  nodeTakesNextJob,
  SERVICE_DEFINITION,
  tasksWhen,
} from '../../helpers/deployments.js'
import {eventually} from '../../helpers/eventually.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {parseMetrics} from '../../helpers/metrics.js'

const PRICE = 100n // the localnet market's token base units per second
const SPELLINGS = ['/deployments', '/api/deployments'] as const

/** A definition running `cmd`: another one for each revision. */
const definition = (cmd: string[]) => ({
  ...SERVICE_DEFINITION,
  ops: [{...SERVICE_DEFINITION.ops[0]!, args: {...SERVICE_DEFINITION.ops[0]!.args, cmd}}],
})

describe('deployment manager routes on the localnet: both spellings, /metrics, duplicate', function () {
  this.timeout(180_000)
  const t = useLocalnet()
  // The manager of the test's own: its clock is moved to an extension's due time rather than waited on.
  let skew = 0
  let dir: string
  let manager: Awaited<ReturnType<typeof startDeploymentManager>>
  const url = () => manager.url
  before(async () => {
    dir = tempDir()
    manager = await startDeploymentManager({
      dataDir: join(dir, 'manager'),
      net: localnetClient(t),
      network: 'localnet',
      port: 0,
      now: () => Date.now() + skew,
    })
  })
  after(async () => {
    await manager?.close()
    removeDir(dir)
  })

  const statusIs = (owner: Keypair, base: string, id: string, status: string) =>
    eventually(`deployment ${id} ${status}`, 60_000, async () => {
      const {body} = await api(url(), owner, 'GET', `${base}/${id}`)
      return body.status === status ? body : undefined
    })

  it('every route answers under /deployments and under /api/deployments, the same steps giving the same answers', async () => {
    /** What each spelling's run answered: `route -> status` in order, and the members that do not differ by id. */
    const runs: {route: string; status: number; shape?: unknown}[][] = []
    for (const base of SPELLINGS) {
      const owner = Keypair.generate()
      const seen: {route: string; status: number; shape?: unknown}[] = []
      runs.push(seen)
      const step = async (
        route: string,
        expected: number,
        params?: Record<string, unknown>,
        shape?: (b: Body) => unknown,
      ) => {
        const [method, template] = route.split(' ') as [string, string]
        const path = template
          .replace('{base}', base)
          .replace('{keys}', `${keyBase}/api-keys`)
          .replace(':id', ids.id ?? '')
          .replace(':job', ids.job ?? '')
          .replace(':copy', ids.copy ?? '')
          .replace(':vault', ids.vault ?? '')
          .replace(':key', ids.key ?? '')
        const answer = await api(url(), owner, method, path, params)
        assert.equal(answer.status, expected, `${method} ${path}: ${JSON.stringify(answer.body)}`)
        seen.push({route, status: answer.status, ...(shape ? {shape: shape(answer.body)} : {})})
        return answer.body
      }
      const ids: Record<string, string | undefined> = {}
      const keyBase = base.replace('/deployments', '')

      const created = await step(
        'POST {base}/create',
        201,
        {
          name: 'routes',
          replicas: 1,
          timeout: 10,
          strategy: 'SIMPLE-EXTEND',
          job_definition: definition(['sleep', '3600']),
          time_scale: 20,
        },
        (b) => [b.status, b.name, b.replicas],
      )
      ids.id = created.id
      ids.vault = created.vault
      await step('GET {base}', 200, undefined, (b) => b.pagination.total_items)
      await step('GET {base}/:id', 200, undefined, (b) => [b.status, b.strategy])
      await step('POST {base}/:id/start', 402, undefined, (b) => b.error.code)
      t.ln.node.fund(new PublicKey(created.vault), {lamports: 100_000_000n, tokens: 1_000_000n})
      await step('POST {base}/:id/start', 200, undefined, (b) => b.status)
      const jobs = await eventually('the job listed', 30_000, async () => {
        const page = await api<{jobs: {job: string}[]}>(url(), owner, 'GET', `${base}/${created.id}/jobs`)
        return page.body.jobs.length === 1 ? page.body.jobs : undefined
      })
      ids.job = jobs[0]!.job
      await step('GET {base}/:id/jobs', 200, undefined, (b) => (b.jobs as unknown[]).length)
      await step('GET {base}/:id/jobs/:job', 200, undefined, (b) => [b.job === ids.job, b.revision])
      await step('GET {base}/:id/events', 200, undefined, (b) =>
        (b.events as {type: string}[]).some((e) => e.type === 'DEPLOYMENT_STARTED'),
      )
      await step('GET {base}/:id/tasks', 200, undefined, (b) =>
        (b.tasks as {task: string}[]).some((x) => x.task === 'LIST'),
      )
      await step('GET {base}/:id/revisions', 200, undefined, (b) => (b.revisions as unknown[]).length)
      await step('GET {base}/:id/vault', 200, undefined, (b) => b.vault === ids.vault)
      await step('GET {base}/:id/header', 200, undefined, (b) => typeof b.header)
      await step('PATCH {base}/:id/update-timeout', 200, {timeout: 20}, (b) => b.timeout)
      await step('PATCH {base}/:id/update-replica-count', 200, {replicas: 1}, (b) => b.replicas)
      await step('PATCH {base}/:id/update-schedule', 400, {schedule: '0 3 * * *'}, (b) => b.error.code)
      await step('POST {base}/:id/create-revision', 200, definition(['sleep', '3599']), (b) => b.active_revision)
      await step('PATCH {base}/:id/update-active-revision', 200, {active_revision: 1}, (b) => b.active_revision)
      const copy = await step('POST {base}/:id/duplicate', 201, {}, (b) => [b.name, b.status, b.vault === ids.vault])
      ids.copy = copy.id
      await step('POST {base}/:id/stop', 200, undefined, (b) => b.status)
      await statusIs(owner, base, created.id, 'STOPPED')
      await step('POST {base}/:id/archive', 200, undefined, (b) => b.status)
      await step('DELETE {base}/:copy', 204)
      const shared = await step('POST {base}/vaults/create', 200, undefined, (b) => typeof b.vault)
      await step('GET {base}/vaults', 200, undefined, (b) =>
        (b as unknown as {vault: string}[]).some((v) => v.vault === shared.vault),
      )
      await step('POST {base}/vaults/:vault/withdraw', 200, {}, (b) => typeof b.transaction)
      await step('DELETE {base}/:id', 204)
      await step('GET {base}/:id', 404, undefined, (b) => b.error.code)
      // gpunet's API keys, beside the deployments under the same spelling.
      const key = await step('POST {keys}', 201, {name: 'routes'}, (b) => typeof b.key)
      ids.key = String(key.id)
      await step('GET {keys}', 200, undefined, (b) => (b as unknown as unknown[]).length)
      await step('DELETE {keys}/:key', 204)
    }
    const [bare, prefixed] = runs
    assert.deepEqual(bare, prefixed)
    // Every route of the API (route-spellings.test.ts's table) was driven.
    assert.equal(new Set(bare!.map((s) => s.route.replace(':copy', ':id'))).size, 26)
  })

  it('/metrics: deployments, tasks, listings, failures and vault balances move as a deployment is created, started and a task fails; nothing secret in it', async () => {
    const owner = Keypair.generate()
    const scrape = async () => {
      const response = await fetch(`${url()}/metrics`)
      assert.equal(response.status, 200)
      const text = await response.text()
      return {text, at: parseMetrics(text)}
    }
    const value = (m: Map<string, number>, sample: string) => m.get(`deployment_manager_${sample}`) ?? 0
    const before = await scrape()

    // 10 minutes at time_scale 40: a job of 15 s on chain, extended 1.5 s before its end.
    const created = await api(url(), owner, 'POST', '/deployments/create', {
      name: 'metrics',
      replicas: 1,
      timeout: 10,
      strategy: 'SIMPLE-EXTEND',
      job_definition: SERVICE_DEFINITION,
      time_scale: 40,
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    const d = created.body
    // Exactly the tokens of one listing: the extension finds the vault empty.
    t.ln.node.fund(new PublicKey(d.vault), {lamports: 100_000_000n, tokens: PRICE * 15n})
    const drafted = await scrape()
    const draft = 'deployments{status="DRAFT",strategy="SIMPLE-EXTEND"}'
    assert.equal(value(drafted.at, draft), value(before.at, draft) + 1)
    assert.equal(value(drafted.at, 'vaults'), value(before.at, 'vaults') + 1)
    assert.equal(value(drafted.at, 'vault_balances_read'), 1)
    assert.equal(value(drafted.at, `vault_token_base_units{vault="${d.vault}"}`), Number(PRICE * 15n))
    assert.equal(value(drafted.at, `vault_sol_lamports{vault="${d.vault}"}`), 100_000_000)

    assert.equal((await api(url(), owner, 'POST', `/deployments/${d.id}/start`)).status, 200)
    await tasksWhen(url(), owner, d.id, (tasks) => tasks.some((x) => x.task === 'LIST' && x.status === 'DONE'))
    const started = await scrape()
    assert.equal(value(started.at, draft), value(before.at, draft))
    assert.equal(
      value(started.at, 'tasks{task="LIST",status="DONE"}'),
      value(before.at, 'tasks{task="LIST",status="DONE"}') + 1,
    )
    const listed = (m: Map<string, number>) =>
      ['QUEUED', 'RUNNING', 'COMPLETED', 'STOPPED'].reduce((sum, state) => sum + value(m, `jobs{state="${state}"}`), 0)
    assert.equal(listed(started.at), listed(before.at) + 1)
    // The listing paid the job's price from the vault.
    assert.equal(value(started.at, `vault_token_base_units{vault="${d.vault}"}`), 0)

    await nodeTakesNextJob(t)
    const failed = 'task_failures{task="EXTEND"}'
    skew += 13_500
    const after = await eventually('the extension failed', 60_000, async () => {
      const now = await scrape()
      return value(now.at, failed) > value(started.at, failed) ? now : undefined
    })
    const poor = 'deployments{status="INSUFFICIENT_FUNDS",strategy="SIMPLE-EXTEND"}'
    await eventually('INSUFFICIENT_FUNDS counted', 30_000, async () =>
      value((await scrape()).at, poor) === value(before.at, poor) + 1 ? true : undefined,
    )
    assert.equal(listed(after.at), listed(before.at) + 1, 'one job listed, not another')

    // Nothing secret: no API key, no wallet signature, no header the vault signed, no owner, id or name; every
    // label value is an enum or a vault's public address.
    const key = await api(url(), owner, 'POST', '/api-keys', {name: 'scrape'})
    assert.equal(key.status, 201)
    const header = (await api<{header: string}>(url(), owner, 'GET', `/deployments/${d.id}/header`)).body.header
    const {text} = await scrape()
    const authorization = apiAuthHeaders(owner).authorization
    for (const secret of [
      key.body.key,
      header.split(':')[1]!,
      authorization.split(':')[1]!,
      owner.publicKey.toBase58(),
      d.id,
      'metrics',
    ])
      assert.ok(!text.includes(secret), `/metrics holds ${secret.slice(0, 12)}…`)
    for (const [, label, content] of text.matchAll(/(\w+)="([^"]*)"/g)) {
      if (label === 'vault') assert.equal(bs58.decode(content!).length, 32, content)
      else assert.match(content!, /^[A-Z_-]+$/, `${label}="${content}"`)
    }
    assert.doesNotMatch(
      text,
      /[1-9A-HJ-NP-Za-km-z]{45,}/,
      'no string longer than a public key (a secret key, a signature)',
    )

    assert.equal((await api(url(), owner, 'POST', `/deployments/${d.id}/stop`)).status, 200)
    await statusIs(owner, '/deployments', d.id, 'STOPPED')
  })

  describe('duplicate', () => {
    const owner = Keypair.generate()
    const count = async () => (await api(url(), owner, 'GET', '/deployments?limit=100')).body.pagination.total_items

    it("copies the settings, the vault and the active revision (its own first revision); the source untouched; another owner's is 404; a bad body 400 and nothing created", async () => {
      const made = await api(url(), owner, 'POST', '/deployments/create', {
        name: 'nightly',
        replicas: 2,
        timeout: 15,
        strategy: 'SCHEDULED',
        schedule: '0 3 * * *',
        job_definition: definition(['sleep', '60']),
        time_scale: 5,
      })
      assert.equal(made.status, 201, JSON.stringify(made.body))
      const source = made.body
      const revised = await api(
        url(),
        owner,
        'POST',
        `/deployments/${source.id}/create-revision`,
        definition(['sleep', '61']),
      )
      assert.equal(revised.status, 200, JSON.stringify(revised.body))
      const before = (await api(url(), owner, 'GET', `/deployments/${source.id}`)).body
      assert.equal(before.active_revision, 2)

      const dup = await api(url(), owner, 'POST', `/deployments/${source.id}/duplicate`)
      assert.equal(dup.status, 201, JSON.stringify(dup.body))
      const copy = dup.body
      assert.notEqual(copy.id, source.id)
      assert.equal(copy.name, 'nightly (copy)')
      assert.equal(copy.status, 'DRAFT')
      assert.equal(copy.active_revision, 1)
      for (const member of [
        'vault',
        'market',
        'owner',
        'replicas',
        'timeout',
        'strategy',
        'schedule',
        'confidential',
        'time_scale',
      ])
        assert.deepEqual(copy[member], before[member], member)
      type Revisions = {revisions: {revision: number; job_definition: {deployment_id: string; ops: unknown}}[]}
      const sourceRevisions = (
        await api<Revisions>(url(), owner, 'GET', `/deployments/${source.id}/revisions?sort_order=asc`)
      ).body.revisions
      const copyRevisions = (await api<Revisions>(url(), owner, 'GET', `/deployments/${copy.id}/revisions`)).body
        .revisions
      assert.deepEqual(
        copyRevisions.map((r) => r.revision),
        [1],
      )
      const [first] = copyRevisions
      assert.equal(first!.job_definition.deployment_id, copy.id, 'listed under the copy’s own id')
      assert.deepEqual(
        {...first!.job_definition, deployment_id: source.id},
        sourceRevisions[1]!.job_definition,
        "the source's active revision (2), not its first",
      )
      assert.deepEqual(
        (await api(url(), owner, 'GET', `/deployments/${source.id}`)).body,
        before,
        'the source untouched',
      )

      // name and market given; autostart from a vault short of the deposit: created all the same, to fund and start.
      const named = await api(url(), owner, 'POST', `/api/deployments/${source.id}/duplicate`, {
        name: 'nightly-b',
        market: t.market.toBase58(),
        autostart: true,
      })
      assert.equal(named.status, 201, JSON.stringify(named.body))
      assert.equal(named.body.name, 'nightly-b')
      assert.equal(named.body.status, 'INSUFFICIENT_FUNDS')

      const stranger = Keypair.generate()
      const foreign = await api(url(), stranger, 'POST', `/deployments/${source.id}/duplicate`, {name: 'mine now'})
      assert.equal(foreign.status, 404)
      assert.equal(foreign.body.error.code, 'not_found')
      assert.equal((await api(url(), stranger, 'GET', '/deployments')).body.pagination.total_items, 0)

      const total = await count()
      for (const [body, code] of [
        [{name: 5}, 'invalid_name'],
        [{name: ''}, 'invalid_name'],
        [{market: 'not-an-address'}, 'invalid_market'],
        [{market: Keypair.generate().publicKey.toBase58()}, 'unknown_market'],
        [{autostart: 'yes'}, 'invalid_autostart'],
      ] as const) {
        const refused = await api(url(), owner, 'POST', `/deployments/${source.id}/duplicate`, body)
        assert.equal(refused.status, 400, JSON.stringify(refused.body))
        assert.equal(refused.body.error.code, code)
      }
      const notObject = await fetch(`${url()}/deployments/${source.id}/duplicate`, {
        method: 'POST',
        headers: {...apiAuthHeaders(owner), 'content-type': 'application/json'},
        body: '[1]',
      })
      assert.equal(notObject.status, 400)
      assert.equal(await count(), total, 'nothing created by a refused duplicate')
    })

    it('gpunet deployment duplicate: --name, --json, --start short of the deposit exit 4, a bad --market exit 2 before sending, an unknown id exit 7', async () => {
      const made = await api(url(), owner, 'POST', '/deployments/create', {
        name: 'cli',
        replicas: 1,
        timeout: 10,
        strategy: 'SIMPLE',
        job_definition: SERVICE_DEFINITION,
      })
      assert.equal(made.status, 201)
      const home = tempDir()
      try {
        writeFileSync(join(home, 'wallet.json'), JSON.stringify([...owner.secretKey]))
        const done = await runManagerCli(
          ['deployment', 'duplicate', made.body.id, '--name', 'cli-b', '--json'],
          home,
          url(),
        )
        assert.equal(done.code, 0, done.stderr)
        const copy = JSON.parse(done.stdout) as Body & {manager: string}
        assert.equal(copy.name, 'cli-b')
        assert.equal(copy.status, 'DRAFT')
        assert.equal(copy.vault, made.body.vault)
        assert.equal(copy.manager, url())
        // --start from a vault without the deposit: the copy is created all the same, and the command says so (4).
        const poor = await runManagerCli(['deployment', 'duplicate', made.body.id, '--start', '--json'], home, url())
        assert.equal(poor.code, 4, poor.stderr)
        const started = JSON.parse(poor.stdout) as Body
        assert.equal(started.status, 'INSUFFICIENT_FUNDS')
        assert.equal(started.error.code, 'insufficient_funds')
        const total = await count()
        const bad = await runManagerCli(['deployment', 'duplicate', made.body.id, '--market', 'nope'], home, url())
        assert.equal(bad.code, 2, bad.stderr)
        assert.match(bad.stderr, /--market/)
        const unknown = await runManagerCli(
          ['deployment', 'duplicate', Keypair.generate().publicKey.toBase58()],
          home,
          url(),
        )
        assert.equal(unknown.code, 7, unknown.stderr)
        assert.equal(await count(), total)
      } finally {
        removeDir(home)
      }
    })
  })
})
