/**
 * A localnet of two markets (one node each, on host processes): each market's node takes only that market's jobs;
 * a job whose image its node does not hold waits for the simulated pull, the next job of that image on that node
 * does not; the reservations routes count free nodes as they leave and join, match requirements as the network
 * does, and refuse an unknown metric or a wrong type with 422.
 */
import assert from 'node:assert/strict'

import {Keypair, PublicKey} from '@solana/web3.js'

import type {MarketsSpec} from '../../../src/lib/localnet/markets/spec.js'
import {DEFAULT_MARKET} from '../../../src/lib/localnet/markets/default-markets.js'
import {prepareUpload} from '../../../src/lib/definition/network-form/prepare.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {listInstruction, sendInstructions} from '../../helpers/market.js'
import {runOf, waitFor} from '../../helpers/node.js'
import {eventually} from '../../helpers/eventually.js'
import {decodeMarketAccount} from '../../../src/lib/market/codec/accounts.js'

const IMAGE = 'docker.io/library/alpine:3'

/** 100 MB at 50 MB/s: a 2 s pull. */
const SPEC: MarketsSpec = {
  version: 1,
  images: {[IMAGE]: 100},
  defaultImageSize: 500,
  markets: [
    DEFAULT_MARKET,
    {
      slug: 'big',
      name: 'Big GPUs',
      type: 'PREMIUM',
      gpus: ['NVIDIA H100 80GB HBM3'],
      vram: 80,
      priceUnits: '1000',
      timeout: 3600,
      networkFee: 0,
      requiredImages: [IMAGE],
      client: true,
      nodes: [{gpu: 'NVIDIA H100 80GB HBM3', vram: 80, ram: 256, country: 'US', cached: [IMAGE]}],
    },
  ],
}

const PULL_MS = 2000

describe('localnet markets: nodes, pulls and the reservations routes', function () {
  this.timeout(90_000)
  const lines: string[] = []
  const t = useLocalnet({
    markets: SPEC,
    node: {
      gatewayPort: 0,
      runtime: 'host',
      gpus: 0,
      pullSimulation: {rateMbPerSecond: 50, scale: 1},
      log: (line) => lines.push(line),
    },
  })

  const marketOf = (slug: string) => t.ln.runtime.markets.find((m) => m.slug === slug)!
  const nodeOf = (slug: string) => t.ln.runtime.nodes.find((n) => n.slug === slug)!

  /** Posts a host-process job of IMAGE to a market; resolves with its address. */
  async function postTo(market: PublicKey): Promise<PublicKey> {
    const document = {
      version: '0.1',
      type: 'container',
      ops: [{id: 'a', type: 'container/run', args: {image: IMAGE, cmd: ['true']}}],
    }
    const prepared = await prepareUpload(document, 'localnet')
    if (!prepared.ok) throw new Error(JSON.stringify(prepared.issues))
    const {cid} = await t.ln.node.content.add(Buffer.from(prepared.upload.bytes))
    const job = Keypair.generate()
    const run = Keypair.generate()
    const ix = listInstruction({
      programId: t.programId,
      market,
      mint: t.mint,
      payer: t.wallet.publicKey,
      job: job.publicKey,
      run: run.publicKey,
      timeout: 600n,
      cid,
    })
    const answer = await sendInstructions(t, [ix], [t.wallet, job, run])
    if (answer.error) throw new Error(answer.error.message)
    return job.publicKey
  }

  async function timedJob(market: PublicKey): Promise<{ms: number; node: string}> {
    const started = Date.now()
    const job = await postTo(market)
    const node = await eventually('the job taken', 30_000, async () => runOf(t, job)?.node.toBase58(), 20)
    await waitFor(t, job, 'COMPLETED', 30_000)
    return {ms: Date.now() - started, node}
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the routes' answers, checked member by member
  type Json = any

  async function hm(path: string, body?: unknown): Promise<{status: number; json: Json}> {
    const res = await fetch(`${t.ln.runtime.rpcUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {'content-type': 'application/json'},
      ...(body === undefined ? {} : {body: JSON.stringify(body)}),
    })
    return {status: res.status, json: await res.json()}
  }

  it("opens each market with the jobs program's open and lists it with its GPUs, VRAM, type and nodes", async () => {
    assert.deepEqual(
      t.ln.runtime.markets.map((m) => [m.slug, m.nodes]),
      [
        ['localnet', 1],
        ['big', 1],
      ],
    )
    assert.equal(marketOf('localnet').address, t.market.toBase58())
    const {status, json} = await hm('/api/markets/big/')
    assert.equal(status, 200)
    assert.equal(json.address, marketOf('big').address)
    assert.equal(json.type, 'PREMIUM')
    assert.deepEqual(json.gpu_types, ['NVIDIA H100 80GB HBM3'])
    assert.equal(json.lowest_vram, 80)
    assert.equal(json.nos_job_price_per_second, 0.001)
    assert.equal(json.usd_reward_per_hour, 1.8, '0.001 tokens/s at 0.5 USD for an hour')
    assert.deepEqual(json.nodes, [nodeOf('big').address])
    // The chain holds the market the jobs program opened, with the file's price and timeout.
    const market = decodeMarketAccount((await t.connection.getAccountInfo(new PublicKey(json.address)))!.data)
    assert.equal(market.jobPrice, 1000n)
    assert.equal(market.jobTimeout, 3600n)
  })

  it("a market's node takes only that market's jobs; an image it lacks waits for its pull, once", async () => {
    const big = new PublicKey(marketOf('big').address)
    lines.length = 0
    // The big market's node holds the image: its job starts at once.
    const onBig = await timedJob(big)
    assert.equal(onBig.node, nodeOf('big').address)
    assert.ok(onBig.ms < PULL_MS, `${onBig.ms} ms on a node holding the image`)
    // The default market's node does not: its first job of the image waits the 2 s pull, the second does not.
    const first = await timedJob(t.market)
    assert.equal(first.node, nodeOf('localnet').address)
    assert.ok(first.ms >= PULL_MS, `${first.ms} ms: the pull of 100 MB at 50 MB/s is 2 s`)
    const second = await timedJob(t.market)
    assert.equal(second.node, nodeOf('localnet').address)
    assert.ok(second.ms < PULL_MS, `${second.ms} ms: the node holds the image now`)
    const pulls = lines.filter((line) => line.includes(' pulling '))
    assert.deepEqual(pulls, [
      `node ${nodeOf('localnet').address}: pulling ${IMAGE} (100 MB at 50 MB/s, simulated): 2.0 s`,
    ])
  })

  it("GET /reservations/gpus counts free nodes as they leave and join, in the network's shape", async () => {
    const gpu = (json: Json, name: string) => json.gpus.find((g: {name: string}) => g.name === name)
    const before = await hm('/reservations/gpus')
    assert.equal(before.status, 200)
    // The network's client's fixture members, exactly (nosana-kit, packages/api routes/reservations).
    assert.deepEqual(Object.keys(gpu(before.json, 'NVIDIA H100 80GB HBM3')).sort(), [
      'available',
      'markets',
      'name',
      'nodes',
      'vramGb',
      'working',
    ])
    assert.deepEqual(gpu(before.json, 'NVIDIA H100 80GB HBM3'), {
      name: 'NVIDIA H100 80GB HBM3',
      vramGb: 80,
      nodes: 1,
      available: 1,
      working: 0,
      markets: [marketOf('big').address],
    })
    const node = nodeOf('big').address
    const left = await fetch(`${t.ln.runtime.rpcUrl}/localnet/nodes/${node}/leave`, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: '{}',
    })
    assert.equal(left.status, 200)
    assert.equal(((await left.json()) as {left: boolean}).left, true)
    assert.equal(gpu((await hm('/reservations/gpus')).json, 'NVIDIA H100 80GB HBM3').available, 0)
    assert.equal((await hm('/reservations/available', {requirements: {vram_gb: 40}})).json.total, 0)
    const joined = await fetch(`${t.ln.runtime.rpcUrl}/localnet/nodes/${node}/join`, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: '{}',
    })
    assert.equal(joined.status, 200)
    await eventually('the node back in its queue', 10_000, async () =>
      gpu((await hm('/reservations/gpus')).json, 'NVIDIA H100 80GB HBM3').available === 1 ? true : undefined,
    )
  })

  it('matches requirements as the network does: a number a minimum, a string exact, the GPU model as name', async () => {
    const total = async (requirements: Record<string, unknown>) =>
      (await hm('/reservations/available', {requirements})).json
    const big = await total({vram_gb: 40})
    assert.deepEqual(big, {
      total: 1,
      price: {minUsdPerHour: 1.8, maxUsdPerHour: 1.8},
      nodes: [{nodeAddress: nodeOf('big').address, market: marketOf('big').address}],
    })
    assert.equal((await total({vram_gb: 12})).total, 2, '12 is a minimum: both')
    assert.equal((await total({vram_gb: 81})).total, 0)
    assert.equal((await total({name: 'NVIDIA GeForce RTX 3060'})).total, 1)
    assert.equal((await total({name: 'NVIDIA GeForce RTX'})).total, 0, 'a string must match exactly')
    assert.equal((await total({country: 'US', ram_gb: 64})).total, 1)
    assert.deepEqual(await total({country: 'FR'}), {total: 0, price: null, nodes: []})
    const options = await hm('/reservations/requirements', {
      metrics: ['ram_gb'],
      requirements: {name: 'NVIDIA H100 80GB HBM3'},
    })
    assert.equal(options.status, 200)
    assert.deepEqual(options.json, {
      nodes: 1,
      metrics: [
        {
          key: 'ram_gb',
          group: null,
          type: 'float',
          match: 'minimum',
          perInstance: false,
          min: 256,
          max: 256,
          values: [{value: 256, nodes: 1}],
        },
      ],
    })
    const query = await hm('/reservations/requirements?metrics=country')
    assert.deepEqual(query.json.metrics[0].values.map((v: {value: string}) => v.value).sort(), ['NL', 'US'])
  })

  it('answers 422 for an unknown metric or a value of the wrong type', async () => {
    for (const [path, body, words] of [
      ['/reservations/available', {requirements: {gpu_count: 2}}, /unknown metric gpu_count/],
      ['/reservations/available', {requirements: {vram_gb: '40'}}, /vram_gb must be a number/],
      ['/reservations/available', {requirements: {country: 1}}, /country must be a string/],
      ['/reservations/requirements', {metrics: ['colour']}, /unknown metric colour/],
      ['/reservations/requirements', {requirements: {name: true}}, /name must be a string/],
      ['/reservations/available', {requirements: [1]}, /the body must be/],
    ] as const) {
      const {status, json} = await hm(path, body)
      assert.equal(status, 422, JSON.stringify(body))
      assert.match(json.message, words)
    }
  })
})
