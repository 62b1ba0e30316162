/**
 * A localnet with its default markets, read as a user of the network reads markets: `gpunet market list --json`
 * gives each market's GPU, VRAM, type and prices, and the network's own client, `@nosana/api` 2.1.8 unmodified
 * (`createNosanaApi(network, key, {backend_url})`), reads the same markets through `markets.list`, `markets.get` and
 * `markets.getRequiredResources` at `/api/markets/...`. Then the host manager made unreachable: the chain's figures
 * alone, a warning, exit 0, and its members null; a filter needs it (exit 5).
 */
import {strict as assert} from 'node:assert'

import {createNosanaApi, NosanaNetwork} from '@nosana/api'

import type {LocalnetStatus} from '../../src/lib/localnet/server/control.js'
import {useCliSandbox} from '../helpers/cli-localnet.js'
import {runCli} from '../helpers/cli.js'

interface Listed {
  tokenUsd: number | null
  defaultMarket: string
  markets: {
    market: string
    pricePerSecond: {amount: number}
    pricePerHour: {amount: number}
    usdPerHour: number | null
    freeNodes: number
    queuedJobs: number
    hostManager: {
      slug: string | null
      type: string | null
      gpu_types: string[] | null
      lowest_vram: number | null
      usd_reward_per_hour: number | null
      network_fee_percentage: number | null
      required_images: string[] | null
    }
  }[]
}

describe('the default markets, in market list and through @nosana/api 2.1.8', function () {
  this.timeout(120_000)
  const box = useCliSandbox()
  // The default markets (the sandbox pins one market: this test wants the three), nodes on host processes.
  const env = () => {
    const rest: NodeJS.ProcessEnv = {...box.env, GPUNET_NODE_RUNTIME: 'host'}
    delete rest.GPUNET_LOCALNET_MARKETS
    return rest
  }
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}) => runCli(args, {env: {...env(), ...extra}})

  it('market list --json has each market with its GPU, VRAM, type and prices', async () => {
    const started = await run(['localnet', 'start', '--detach', '--json'])
    assert.equal(started.code, 0, started.stderr)
    const status = JSON.parse(started.stdout) as LocalnetStatus
    assert.deepEqual(
      status.markets.map((m) => [m.slug, m.nodes]),
      [
        ['localnet', 1],
        ['rtx-4090', 1],
        ['a100-80gb', 1],
      ],
    )
    const listed = await run(['market', 'list', '--json'])
    assert.equal(listed.code, 0, listed.stderr)
    assert.equal(listed.stderr, '')
    const {markets, defaultMarket, tokenUsd} = JSON.parse(listed.stdout) as Listed
    assert.equal(tokenUsd, 0.5)
    assert.equal(defaultMarket, status.market)
    const bySlug = new Map(markets.map((m) => [m.hostManager.slug, m]))
    const expected = [
      ['localnet', 'COMMUNITY', 'NVIDIA GeForce RTX 3060', 12, 0.0001, 0.18],
      ['rtx-4090', 'PREMIUM', 'NVIDIA GeForce RTX 4090', 24, 0.0004, 0.72],
      ['a100-80gb', 'OTHER', 'NVIDIA A100 80GB PCIe', 80, 0.0012, 2.16],
    ] as const
    for (const [slug, type, gpu, vram, perSecond, usd] of expected) {
      const m = bySlug.get(slug)!
      assert.ok(m, slug)
      assert.equal(m.market, status.markets.find((s) => s.slug === slug)!.address)
      assert.equal(m.hostManager.type, type)
      assert.deepEqual(m.hostManager.gpu_types, [gpu])
      assert.equal(m.hostManager.lowest_vram, vram)
      assert.equal(m.pricePerSecond.amount, perSecond)
      assert.equal(m.pricePerHour.amount, Math.round(perSecond * 3600 * 1e6) / 1e6)
      assert.equal(m.usdPerHour, usd)
      assert.equal(m.hostManager.usd_reward_per_hour, usd)
      assert.equal(m.hostManager.network_fee_percentage, 0)
      assert.equal(m.freeNodes, 1, `${slug}: its node waits in its queue`)
      assert.equal(m.queuedJobs, 0)
    }
    assert.deepEqual(bySlug.get('rtx-4090')!.hostManager.required_images, ['docker.io/ollama/ollama:latest'])

    const big = await run(['market', 'list', '--min-vram', '20', '--type', 'PREMIUM', '--json'])
    assert.equal(big.code, 0, big.stderr)
    assert.deepEqual(
      (JSON.parse(big.stdout) as Listed).markets.map((m) => m.hostManager.slug),
      ['rtx-4090'],
    )
    const model = await run(['market', 'list', '--gpu-model', 'nvidia a100 80gb pcie', '--json'])
    assert.deepEqual(
      (JSON.parse(model.stdout) as Listed).markets.map((m) => m.hostManager.slug),
      ['a100-80gb'],
    )
    const rtx = status.markets.find((m) => m.slug === 'rtx-4090')!.address
    const got = await run(['market', 'get', rtx, '--json'])
    assert.equal(got.code, 0, got.stderr)
    const detail = JSON.parse(got.stdout) as {gpuModels: unknown; hostManager: {slug: string}; freeNodes: number}
    assert.equal(detail.hostManager.slug, 'rtx-4090')
    assert.deepEqual(detail.gpuModels, [
      {name: 'NVIDIA GeForce RTX 4090', vramGb: 24, nodes: 1, available: 1, working: 0},
    ])
    const human = await run(['market', 'list'])
    assert.match(
      human.stdout,
      /^ {3}\S+ +rtx-4090 +PREMIUM +NVIDIA GeForce RTX 4090 +24 GB +1\.44 +0\.72 +1 +0 +7200 s +none$/m,
    )
  })

  it("@nosana/api 2.1.8's markets.list, markets.get and getRequiredResources read them unmodified", async () => {
    const status = JSON.parse((await run(['localnet', 'status', '--json'])).stdout) as LocalnetStatus
    const api = createNosanaApi(NosanaNetwork.MAINNET, 'any-key', {backend_url: status.rpcUrl!})
    const listed = await api.markets.list()
    assert.deepEqual(
      listed.map((m) => [m.slug, m.type, m.gpu_types, m.lowest_vram, m.nos_job_price_per_second]),
      [
        ['localnet', 'COMMUNITY', ['NVIDIA GeForce RTX 3060'], 12, 0.0001],
        ['rtx-4090', 'PREMIUM', ['NVIDIA GeForce RTX 4090'], 24, 0.0004],
        ['a100-80gb', 'OTHER', ['NVIDIA A100 80GB PCIe'], 80, 0.0012],
      ],
    )
    const nodeOf = (slug: string) => status.nodes.filter((n) => n.slug === slug).map((n) => n.address)
    for (const market of listed) {
      assert.deepEqual(market.nodes, nodeOf(market.slug))
      assert.equal(market.network_fee_percentage, 0)
      assert.deepEqual(market.required_remote_resources, [])
    }
    const a100 = status.markets.find((m) => m.slug === 'a100-80gb')!
    const got = await api.markets.get(a100.address)
    assert.equal(got.slug, 'a100-80gb')
    assert.equal(got.usd_reward_per_hour, 2.16)
    assert.deepEqual(await api.markets.get('rtx-4090'), listed[1])
    const resources = await api.markets.getRequiredResources('rtx-4090')
    assert.deepEqual(resources.required_images, ['docker.io/ollama/ollama:latest'])
    assert.deepEqual(resources.required_remote_resources, [])
    await assert.rejects(api.markets.get('no-such-market'), /Failed to fetch market/)
  })

  it('without its host manager: the chain figures, a warning, exit 0, its members null; a filter is exit 5', async () => {
    const gone = {GPUNET_HOST_MANAGER_URL: 'http://127.0.0.1:1'}
    const listed = await run(['market', 'list', '--json'], gone)
    assert.equal(listed.code, 0, listed.stderr)
    assert.match(
      listed.stderr,
      /^Warning: the host manager at http:\/\/127\.0\.0\.1:1 could not be read .*: GPU models, VRAM, type, USD prices and required images are missing \(null under --json\)\.$/m,
    )
    const {markets, tokenUsd} = JSON.parse(listed.stdout) as Listed
    assert.equal(tokenUsd, null)
    assert.equal(markets.length, 3)
    for (const m of markets) {
      assert.ok(m.pricePerSecond.amount > 0)
      assert.equal(m.freeNodes, 1)
      assert.equal(m.usdPerHour, null)
      assert.deepEqual(Object.values(m.hostManager), [null, null, null, null, null, null, null, null])
    }
    const one = await run(['market', 'get', markets[0]!.market, '--json'], {
      ...gone,
      GPUNET_RESERVATIONS_URL: 'http://127.0.0.1:1',
    })
    assert.equal(one.code, 0, one.stderr)
    assert.equal((JSON.parse(one.stdout) as {gpuModels: unknown}).gpuModels, null)
    assert.match(one.stderr, /^Warning: the reservations routes at http:\/\/127\.0\.0\.1:1 could not be read/m)
    const filtered = await run(['market', 'list', '--min-vram', '40', '--json'], gone)
    assert.equal(filtered.code, 5)
    assert.equal((JSON.parse(filtered.stdout) as {error: {code: string}}).error.code, 'host_manager_unavailable')
    await run(['localnet', 'stop'])
  })
})
