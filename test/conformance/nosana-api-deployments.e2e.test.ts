/**
 * The network's own client library, unmodified: `@nosana/api` 2.1.8's deployments client (created by
 * `createNosanaApi(network, auth, {backend_url})`, directly with an API key, and through `@nosana/kit` with a wallet
 * signer) against the deployment manager the localnet runs, over real HTTP. Every call it has, with both auths:
 * list (filters, cursors), create, get, pipe, start, stop, archive, delete, the replica count, the timeout,
 * revisions (create, make active, list), jobs, a job, events, tasks, the vault's auth header (refused to an API key:
 * it never expires); with the wallet also
 * the vaults (create, list) and a vault's balance, top-up and withdraw, signed and sent by the kit. A header the
 * same wallet signed for a node's API or for the secrets service's login opens nothing. What it sends under `/api` is
 * what the bare spelling of the network's manager of 2026 serves (issue 54), and a copy made with `duplicate` (which
 * 2.1.8 lacks) is one it reads and drives. `update-market`, which 2.1.8 lacks too, answers the request the kit's newer
 * `deploymentUpdateMarket` sends with what it reads.
 */
import {strict as assert} from 'node:assert'

import {createNosanaApi, NosanaNetwork} from '@nosana/api'
import {createNosanaClient, getNosanaConfig} from '@nosana/kit'
import {address, createKeyPairSignerFromBytes} from '@solana/kit'
import {PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'

import {verifySignature} from '../../src/lib/keys/ed25519.js'
import {NETWORK_CLI_MESSAGE, signHeader} from '../../src/lib/node-api/protocol.js'
import {apiAuthHeaders} from '../../src/lib/deployments/auth-header.js'
import {api, holdings, nodeTakesNextJob, SERVICE_DEFINITION} from '../helpers/deployments.js'
import {eventually} from '../helpers/eventually.js'
import {useLocalnet} from '../helpers/localnet.js'
import {ONE_MARKET} from '../helpers/markets.js'
import {DEFAULT_MARKET} from '../../src/lib/localnet/markets/default-markets.js'
import {restoreSdkPresets} from '../helpers/sdk-presets.js'
import {newAddress, newWallet, signLogin} from '../helpers/secrets.js'

type NosanaApi = ReturnType<typeof createNosanaApi>
type Deployments = NosanaApi['deployments']
type ApiDeployment = Awaited<ReturnType<Deployments['get']>>
type CreateBody = Parameters<Deployments['create']>[0]

/** The revision definitions: another command each. */
const definition = (cmd: string[]) =>
  ({
    ...SERVICE_DEFINITION,
    ops: [{...SERVICE_DEFINITION.ops[0]!, args: {...SERVICE_DEFINITION.ops[0]!.args, cmd}}],
  }) as unknown as CreateBody['job_definition']

describe('@nosana/api deployments client against the localnet manager', function () {
  this.timeout(240_000)
  const t = useLocalnet()
  const url = () => t.ln.runtime.deploymentManager as string

  const body = (name: string, more: Partial<CreateBody> = {}): CreateBody =>
    ({
      name,
      market: t.market.toBase58(),
      replicas: 1,
      timeout: 10,
      strategy: 'SIMPLE',
      job_definition: definition(['sleep', '3600']),
      // gpunet's localnet member: jobs of 30 s, a rollout deadline of 30 s.
      time_scale: 20,
      ...more,
    }) as CreateBody

  /** Waits for a deployment's status as `get` reads it; answers the new object. */
  const statusOf = (deployments: Deployments, id: string, status: string) =>
    eventually(`deployment ${id} ${status}`, 60_000, async () => {
      const d = await deployments.get(id)
      return d.status === status ? d : undefined
    })

  /**
   * Every call both auths have, on deployments named `label-...`; `fund` fills a deployment's vault. Answers a
   * stopped deployment, for the caller's own calls.
   */
  async function everyCall(deployments: Deployments, label: string, fund: (d: ApiDeployment) => Promise<void>) {
    // list: filters and cursors, 11 drafts over pages of 10 (each auth runs as an owner of its own).
    for (let i = 0; i < 11; i += 1) await deployments.create(body(`${label}-page-${i}`))
    const first = await deployments.list({limit: 10, sort_order: 'asc'})
    assert.equal(first.deployments.length, 10)
    assert.equal(first.total_items, 11)
    assert.equal(first.deployments[0]!.name, `${label}-page-0`)
    assert.ok(first.deployments[0]!.created_at instanceof Date, 'the client made dates of the ISO times')
    assert.equal(first.previousPage, null)
    const second = await first.nextPage!()
    assert.deepEqual(
      second.deployments.map((d) => d.name),
      [`${label}-page-10`],
    )
    assert.equal(second.nextPage, null)
    assert.equal((await second.previousPage!()).deployments[0]!.name, `${label}-page-0`)
    assert.equal((await deployments.list({status: 'DRAFT,STOPPED', strategy: 'SIMPLE', limit: 50})).total_items, 11)
    assert.equal((await deployments.list({status: 'RUNNING'})).total_items, 0)
    assert.equal((await deployments.list({id: first.deployments[3]!.id})).deployments[0]!.name, `${label}-page-3`)
    // `search` (part of the name), in the network's API though not in @nosana/types 2.1.6's list query.
    const searched = await deployments.list({search: 'page-1', sort_order: 'asc'} as Parameters<Deployments['list']>[0])
    assert.deepEqual(
      searched.deployments.map((d) => d.name),
      [`${label}-page-1`, `${label}-page-10`],
    )

    // create + actions in one pipe: funded, started.
    const main = await deployments.pipe(body(`${label}-main`), fund, (d) => d.start())
    assert.equal(main.status, 'STARTING')
    const got = await deployments.get(main.id)
    assert.equal(got.id, main.id)
    assert.equal(got.active_revision, 1)

    await eventually('the job listed', 30_000, async () =>
      (await main.getJobs()).jobs.length === 1 ? true : undefined,
    )
    const node = await nodeTakesNextJob(t)
    const jobs = await eventually('the job running', 30_000, async () => {
      const page = await main.getJobs({state: 'RUNNING'})
      return page.jobs.length === 1 ? page : undefined
    })
    assert.equal(jobs.total_items, 1)
    const [job] = jobs.jobs
    const detail = await main.getJob(job!.job)
    assert.equal(detail.node, node.publicKey.toBase58())
    assert.equal(detail.revision, 1)
    assert.equal(detail.state, 'RUNNING')
    assert.equal(detail.jobDefinition.ops[0]!.id, 'svc')
    assert.ok(detail.timeStart > 0 && detail.listedAt > 0)
    const events = await main.getEvents({category: 'Deployment'})
    assert.ok(events.events.some((e) => e.type === 'DEPLOYMENT_STARTED'))
    const tasks = await main.getTasks({limit: 10})
    assert.ok(tasks.tasks.some((x) => x.task === 'LIST'))
    assert.equal(tasks.total_items, tasks.tasks.length)

    if (label === 'key') {
      // Not for an API key: the network CLI's message signed once is a lasting credential (its time part is not
      // signed), which would outlive the key's revocation (docs/deployment-api-auth.md, issue 61).
      await assert.rejects(main.generateAuthHeader(), /Error generating deployment header/)
    } else {
      // The vault signs the node message for the owner (logs): its signature checks against the vault's key.
      const header = await main.generateAuthHeader()
      const [message, signature] = header.split(':')
      assert.equal(message, NETWORK_CLI_MESSAGE)
      const vault = new PublicKey(vaultOf(main))
      assert.ok(verifySignature(bs58.decode(signature!), Buffer.from(message!), vault.toBytes()))
    }

    // update-schedule is SCHEDULED's: refused (400) for this SIMPLE one, nothing changed.
    await assert.rejects(main.updateSchedule('*/5 * * * *'), /Error updating schedule/)
    await main.updateTimeout(60)
    assert.equal(main.timeout, 60)
    await main.updateReplicaCount(2)
    assert.equal(main.replicas, 2)
    await eventually('a second job', 30_000, async () => ((await main.getJobs()).total_items === 2 ? true : undefined))
    await main.updateReplicaCount(1)
    assert.equal((await deployments.get(main.id)).replicas, 1)

    // A revision, rolled out: its replica runs, then the old one is stopped.
    await main.createRevision(definition(['sleep', '3599']))
    assert.equal(main.active_revision, 2)
    await eventually('a job of revision 2', 30_000, async () =>
      (await main.getJobs({revision: 2, state: 'QUEUED'})).total_items === 1 ? true : undefined,
    )
    await nodeTakesNextJob(t)
    await eventually('revision 2 rolled out', 30_000, async () => {
      const live = (await main.getJobs({state: 'QUEUED,RUNNING'})).jobs
      return live.length === 1 && live[0]!.revision === 2 ? true : undefined
    })
    const revisions = await main.getRevisions({sort_order: 'asc'})
    assert.deepEqual(
      revisions.revisions.map((r) => r.revision),
      [1, 2],
    )
    // Back to revision 1, made active again: rolled out the same way.
    await main.updateActiveRevision(1)
    assert.equal(main.active_revision, 1)
    await eventually('a job of revision 1 again', 30_000, async () =>
      (await main.getJobs({revision: 1, state: 'QUEUED'})).total_items === 1 ? true : undefined,
    )
    await nodeTakesNextJob(t)
    await eventually('revision 1 again', 30_000, async () => {
      const live = (await main.getJobs({state: 'QUEUED,RUNNING'})).jobs
      return live.length === 1 && live[0]!.revision === 1 ? true : undefined
    })

    await main.stop()
    assert.equal(main.status, 'STOPPING')
    const stopped = await statusOf(deployments, main.id, 'STOPPED')

    // archive: another deployment, started and stopped; on a vault of its own (new_vault, which @nosana/api 2.1.8
    // sends as given), as main's shared one still holds main's funds.
    const other = await deployments.pipe(
      body(`${label}-archived`, {new_vault: true} as Partial<CreateBody>),
      fund,
      (d) => d.start(),
    )
    assert.notEqual(vaultOf(other), vaultOf(main))
    await other.stop()
    const archived = await statusOf(deployments, other.id, 'STOPPED')
    await archived.archive()
    assert.equal(archived.status, 'ARCHIVED')
    assert.equal((await deployments.get(other.id)).status, 'ARCHIVED')
    return stopped
  }

  it('with an API key (createNosanaApi(network, key, {backend_url})): every call it has', async () => {
    const owner = newWallet()
    const ownerKey = new PublicKey(owner.address)
    // The key is made with the wallet (an API key cannot mint keys).
    const made = await api(url(), owner.keypair(), 'POST', '/api/api-keys', {name: 'conformance'})
    assert.equal(made.status, 201, JSON.stringify(made.body))
    const client = createNosanaApi(NosanaNetwork.MAINNET, made.body.key, {backend_url: url()})
    assert.equal('vaults' in client.deployments, false, 'with an API key the client has no vault calls')
    const fund = async (d: ApiDeployment) => {
      t.ln.node.fund(new PublicKey(vaultOf(d)), {lamports: 200_000_000n, tokens: 10_000_000n})
    }
    const stopped = await everyCall(client.deployments, 'key', fund)
    assert.equal(stopped.owner, ownerKey.toBase58())
    await stopped.delete()
    await assert.rejects(client.deployments.get(stopped.id), /Error getting deployment/)
  })

  it('with a wallet signer through @nosana/kit: every call it has, and the vaults (create, list, balance, top-up, withdraw)', async () => {
    const owner = newWallet()
    const ownerKey = new PublicKey(owner.address)
    t.ln.node.fund(ownerKey, {lamports: 5_000_000_000n, tokens: 100_000_000n})
    const kit = createNosanaClient(NosanaNetwork.MAINNET, {
      solana: {rpcEndpoint: t.ln.runtime.rpcUrl, wsEndpoint: t.ln.runtime.wsUrl, commitment: 'confirmed'},
      wallet: await createKeyPairSignerFromBytes(owner.bytes),
      api: {backend_url: url()},
      programs: {
        ...getNosanaConfig(NosanaNetwork.MAINNET).programs,
        jobsAddress: address(t.programId.toBase58()),
        nosTokenAddress: address(t.mint.toBase58()),
      },
    } as Parameters<typeof createNosanaClient>[1])
    restoreSdkPresets()
    const deployments = kit.api.deployments as Deployments & {
      vaults: {create(): Promise<Vault>; list(): Promise<Vault[]>}
    }
    // The vault's own calls: the kit moves SOL and tokens and signs the withdraw.
    const fund = async (d: ApiDeployment) => {
      const vault = (d as unknown as {vault: Vault}).vault
      assert.deepEqual(await vault.getBalance(), {SOL: 0, NOS: 0})
      await vault.topup({SOL: 0.2, NOS: 10})
      assert.deepEqual(await vault.getBalance(), {SOL: 0.2, NOS: 10})
    }
    const stopped = await everyCall(deployments, 'wallet', fund)
    assert.equal(stopped.owner, owner.address)
    const vault = (stopped as unknown as {vault: Vault}).vault
    const before = await holdings(t, ownerKey)
    const held = await holdings(t, new PublicKey(vault.address))
    assert.ok(held.tokens > 0n)
    await vault.withdraw()
    assert.deepEqual(await holdings(t, new PublicKey(vault.address)), {lamports: 0n, tokens: 0n})
    assert.equal((await holdings(t, ownerKey)).tokens - before.tokens, held.tokens)
    await stopped.delete()

    // The shared vault: vaults.create() answers the owner's oldest (the one its first deployment made), every time;
    // listed, and paying for a deployment created with it or with no vault named.
    const shared = await deployments.vaults.create()
    assert.equal(shared.address, vault.address)
    assert.ok(shared.created_at instanceof Date && !Number.isNaN(shared.created_at.getTime()))
    assert.equal((await deployments.vaults.create()).address, shared.address)
    assert.ok((await deployments.vaults.list()).some((v) => v.address === shared.address))
    const onShared = await deployments.create(body('wallet-shared', {vault: shared.address}))
    assert.equal(vaultOf(onShared), shared.address)
    assert.equal(vaultOf(await deployments.create(body('wallet-default'))), shared.address)
    const foreign = await api(url(), newWallet().keypair(), 'POST', '/api/deployments/create', {
      ...body('not-mine'),
      vault: shared.address,
    })
    assert.equal(foreign.status, 404)
    assert.equal(foreign.body.error.code, 'not_found')
  })

  it("what it sends under /api is what the bare spelling (the network's manager of 2026) serves: read, duplicated and counted alike", async () => {
    // It knows only /api paths: the same manager under /deployments, its key made under /api-keys.
    const owner = newWallet()
    const made = await api(url(), owner.keypair(), 'POST', '/api-keys', {name: 'spellings'})
    assert.equal(made.status, 201, JSON.stringify(made.body))
    const {deployments} = createNosanaApi(NosanaNetwork.MAINNET, made.body.key, {backend_url: url()})
    const source = await deployments.create(body('spelled', {replicas: 2}))
    const bare = await api(url(), owner.keypair(), 'GET', `/deployments/${source.id}`)
    assert.equal(bare.status, 200)
    assert.deepEqual(bare.body, (await api(url(), owner.keypair(), 'GET', `/api/deployments/${source.id}`)).body)
    assert.equal(bare.body.name, source.name)

    // duplicate, which 2.1.8 lacks, sent bare; the copy is one the client reads and drives as its own.
    const dup = await api(url(), owner.keypair(), 'POST', `/deployments/${source.id}/duplicate`, {name: 'spelled-copy'})
    assert.equal(dup.status, 201, JSON.stringify(dup.body))
    const copy = await deployments.get(dup.body.id)
    assert.equal(copy.name, 'spelled-copy')
    assert.equal(copy.status, 'DRAFT')
    assert.equal(copy.replicas, 2)
    assert.equal(vaultOf(copy), vaultOf(source))
    const {revisions} = await copy.getRevisions()
    assert.deepEqual(
      revisions.map((r) => [r.revision, (r.job_definition as {deployment_id?: string}).deployment_id]),
      [[1, copy.id]],
    )
    await copy.updateReplicaCount(1)
    assert.equal((await api(url(), owner.keypair(), 'GET', `/deployments/${copy.id}`)).body.replicas, 1)
    assert.equal((await deployments.get(source.id)).replicas, 2, 'the source untouched')
    assert.equal((await deployments.list()).total_items, 2)

    // /metrics counts them, with neither the key nor the owner in it.
    const text = await (await fetch(`${url()}/metrics`)).text()
    assert.match(text, /^deployment_manager_deployments\{status="DRAFT",strategy="SIMPLE"\} [1-9]\d*$/m)
    assert.ok(!text.includes(made.body.key) && !text.includes(owner.address) && !text.includes(copy.id))
  })

  it("a header the same wallet signed for a node's API or the secrets service's login opens nothing", async () => {
    const owner = newWallet()
    const made = await api(url(), owner.keypair(), 'POST', '/api/deployments/create', body('mine'))
    assert.equal(made.status, 201)
    const signs = (generate: () => string) =>
      createNosanaApi(
        NosanaNetwork.MAINNET,
        {identifier: owner.address, generate: async () => generate(), solana: {} as never},
        {backend_url: url()},
      ).deployments
    const login = signLogin(owner)
    const headers = [
      signHeader((m) => owner.sign(m), {action: 'read', node: newAddress(), job: newAddress()}),
      `${NETWORK_CLI_MESSAGE}:${bs58.encode(owner.sign(Buffer.from(NETWORK_CLI_MESSAGE)))}`,
      `service_secret_${login.timestamp}:${login.signature}`,
      // A login signature put under the API's message.
      `NosanaApiAuthentication:${login.signature}`,
    ]
    for (const header of headers) {
      const client = signs(() => header)
      await assert.rejects(client.list(), (error: Error & {statusCode?: number}) => {
        assert.match(error.message, /Error listing deployments/)
        return true
      })
      await assert.rejects(client.get(made.body.id), /Error getting deployment/)
    }
    // The same client with the wallet's own API header reads them.
    const own = signs(() => apiAuthHeaders(owner.keypair(), {timed: false}).authorization)
    assert.equal((await own.get(made.body.id)).id, made.body.id)
  })
})

describe("@nosana/api deployments client: the endpoints of the localnet's manager, behind its gateway", function () {
  this.timeout(120_000)
  // A node agent (of host processes, no podman) for its gateway: nothing here runs a job.
  const t = useLocalnet({node: {gatewayPort: 0, podman: '/nonexistent/podman', hostProcesses: true}})
  const url = () => t.ln.runtime.deploymentManager as string

  it("reads the endpoints as gpunet's manager marks them (kind), the network's deployment URL first, and every revision's definition carrying deployment_id", async () => {
    const owner = newWallet()
    const made = await api(url(), owner.keypair(), 'POST', '/api/api-keys', {name: 'endpoints'})
    assert.equal(made.status, 201, JSON.stringify(made.body))
    const {deployments} = createNosanaApi(NosanaNetwork.MAINNET, made.body.key, {backend_url: url()})
    const exposing = (port: number) =>
      ({
        ...SERVICE_DEFINITION,
        ops: [{...SERVICE_DEFINITION.ops[0]!, args: {...SERVICE_DEFINITION.ops[0]!.args, expose: port}}],
      }) as unknown as CreateBody['job_definition']
    const created = await deployments.create({
      name: 'endpoints',
      market: t.market.toBase58(),
      replicas: 1,
      timeout: 10,
      strategy: 'SIMPLE',
      job_definition: exposing(8080),
    } as CreateBody)
    const got = await deployments.get(created.id)
    const sdk = await import('@nosana/sdk')
    const label = sdk.getExposeIdHash(sdk.createHash(`${got.id}:${vaultOf(got)}`, 45), 'svc', 0)
    const gateway = new URL(t.ln.runtime.gatewayUrl as string)
    // The client's own type, extended by gpunet's members: what it read is what the manager sent, unmodified.
    type Marked = ApiDeployment['endpoints'][number] & {kind: string; online?: boolean}
    const endpoints = got.endpoints as Marked[]
    assert.deepEqual(
      endpoints.map((e) => [e.kind, e.opId, e.port]),
      [
        ['deployment', 'svc', 8080],
        ['stable', 'svc', 8080],
      ],
    )
    assert.equal(endpoints[0]!.url, `http://${label}.${gateway.host}/`)
    assert.equal(endpoints[1]!.url, `http://${got.id}.deploy.localhost:${gateway.port}/`)
    const direct = await api(url(), owner.keypair(), 'GET', `/api/deployments/${got.id}`)
    assert.deepEqual(endpoints, direct.body.endpoints, 'the client passes the objects through as sent')

    // A revision: the client's answer carries the endpoints of the new definition; every revision lists with the id.
    await got.createRevision(exposing(9000))
    assert.deepEqual(
      (got.endpoints as Marked[]).map((e) => [e.kind, e.port]),
      [
        ['deployment', 9000],
        ['stable', 9000],
      ],
    )
    const {revisions} = await got.getRevisions({sort_order: 'asc'})
    assert.deepEqual(
      revisions.map((r) => (r.job_definition as {deployment_id?: string}).deployment_id),
      [got.id, got.id],
    )
  })
})

describe("@nosana/api deployments: update-market, the kit's deploymentUpdateMarket (newer than 2.1.8)", function () {
  this.timeout(120_000)
  // Two markets, no node: a DRAFT deployment changes market at once (a running one's move: move.e2e.test.ts).
  const t = useLocalnet({
    markets: {...ONE_MARKET, markets: [DEFAULT_MARKET, {...DEFAULT_MARKET, slug: 'east', name: 'east', nodes: []}]},
  })
  const url = () => t.ln.runtime.deploymentManager as string

  it('answers the request that method sends (PATCH /deployments/{id}/update-market {market}) with what it reads, under both spellings', async () => {
    const owner = newWallet()
    const made = await api(url(), owner.keypair(), 'POST', '/api/api-keys', {name: 'update-market'})
    assert.equal(made.status, 201, JSON.stringify(made.body))
    const {deployments} = createNosanaApi(NosanaNetwork.MAINNET, made.body.key, {backend_url: url()})
    const created = await deployments.create({
      name: 'update-market',
      market: t.market.toBase58(),
      replicas: 1,
      timeout: 10,
      strategy: 'SIMPLE',
      job_definition: SERVICE_DEFINITION as unknown as CreateBody['job_definition'],
    } as CreateBody)
    // 2.1.8, the only release, has no such method: once one has, this test calls it instead of its request.
    assert.equal('updateMarket' in created, false)
    const east = t.ln.runtime.markets.find((m) => m.slug === 'east')!.address
    // The kit's source (packages/api, deploymentUpdateMarket.ts): the bare path, `{market}`, then it reads
    // `market` and `updated_at` (a date) from the answer.
    const moved = await api(url(), owner.keypair(), 'PATCH', `/deployments/${created.id}/update-market`, {market: east})
    assert.equal(moved.status, 200, JSON.stringify(moved.body))
    assert.equal(moved.body.market, east)
    assert.ok(!Number.isNaN(new Date(moved.body.updated_at as string).getTime()))
    assert.equal(moved.body.move_from, null, 'a DRAFT runs nothing: no move under way')
    const got = await deployments.get(created.id)
    assert.equal(got.market, east)
    assert.equal(got.updated_at.toISOString(), moved.body.updated_at)
    // The /api spelling, as 2.1.8's paths are written, is the same route.
    const back = await api(url(), owner.keypair(), 'PATCH', `/api/deployments/${created.id}/update-market`, {
      market: t.market.toBase58(),
    })
    assert.equal(back.status, 200, JSON.stringify(back.body))
    assert.equal((await deployments.get(created.id)).market, t.market.toBase58())
    // What that method's errorFormatter would throw on: a refusal with the manager's words.
    for (const [market, code] of [
      [t.market.toBase58(), 'same_market'],
      [newWallet().address, 'unknown_market'],
      ['nope', 'invalid_market'],
    ] as const) {
      const refused = await api(url(), owner.keypair(), 'PATCH', `/deployments/${created.id}/update-market`, {market})
      assert.equal(refused.status, 400, market)
      assert.equal(refused.body.error.code, code)
    }
  })
})

/** A deployment's vault address: a string with an API key, the kit's Vault object with a wallet. */
function vaultOf(d: ApiDeployment): string {
  const vault = d.vault as unknown
  return typeof vault === 'string' ? vault : (vault as Vault).address
}

interface Vault {
  address: string
  created_at?: Date
  getBalance(): Promise<{SOL: number; NOS: number}>
  topup(options: {SOL?: number; NOS?: number}): Promise<void>
  withdraw(): Promise<void>
}
