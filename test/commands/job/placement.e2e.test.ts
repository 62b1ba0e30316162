/**
 * Placement from the CLI (docs/jobs.md, "Placement") on a localnet of three markets: one full (it fits, but has no
 * free node), one cheap whose GPUs are too small, one that fits. `job post --min-vram 40` runs on the one that fits,
 * and the table and `--json` name why each other was passed over; nothing that fits, a bad need and an explicit
 * market that does not fit under --strict are refused before anything is paid.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {getAssociatedTokenAddressSync} from '@solana/spl-token'

import {runCli} from '../../helpers/cli.js'
import {sandboxChain, useCliSandbox} from '../../helpers/cli-localnet.js'

const THREE_MARKETS = `markets:
  - slug: localnet
    type: COMMUNITY
    gpus: [NVIDIA GeForce RTX 3060]
    vram: 12
    price: 0.0001
  - slug: h100-full
    type: PREMIUM
    gpus: [NVIDIA H100 80GB HBM3]
    vram: 80
    price: 0.0005
    nodes: []
  - slug: a100-fits
    type: OTHER
    gpus: [NVIDIA A100 80GB PCIe]
    vram: 80
    price: 0.0012
`

/** A job the host runtime runs at once (its own command). */
const DEFINITION = {
  version: '0.1',
  type: 'container',
  ops: [{id: 'hello', type: 'container/run', args: {image: 'docker.io/library/ubuntu:24.04', cmd: ['echo', 'placed']}}],
}

interface PlacementRowJson {
  market: string
  slug: string | null
  rank: number
  chosen: boolean
  fits: boolean
  freeNodes: number
  lacks: string[]
  reason: string
}

interface PlacementJson {
  chosen: string | null
  payment: string
  need: {minVram: number | null}
  markets: PlacementRowJson[]
}

describe('gpunet job post places the job on the market that fits', function () {
  this.timeout(180_000)
  const box = useCliSandbox()
  let env: NodeJS.ProcessEnv
  let file: string
  const bySlug = new Map<string, string>()
  const run = (args: string[]) => runCli(args, {env})

  before(async () => {
    const markets = join(box.dir, 'three-markets.yaml')
    writeFileSync(markets, THREE_MARKETS)
    env = {...box.env, GPUNET_LOCALNET_MARKETS: markets}
    file = join(box.dir, 'job.json')
    writeFileSync(file, JSON.stringify(DEFINITION))
    const started = await run(['localnet', 'start', '--detach', '--runtime', 'host'])
    assert.equal(started.code, 0, started.stderr)
    const listed = await run(['market', 'list', '--json'])
    assert.equal(listed.code, 0, listed.stderr)
    for (const m of (JSON.parse(listed.stdout) as {markets: {market: string; hostManager: {slug: string}}[]}).markets) {
      bySlug.set(m.hostManager.slug, m.market)
    }
    assert.equal(bySlug.size, 3)
  })

  /** The wallet's tokens now, to show that a refusal paid nothing. */
  async function tokens(): Promise<string> {
    const chain = await sandboxChain({...box, env, run})
    const account = getAssociatedTokenAddressSync(chain.mint, chain.wallet.publicKey)
    return (await chain.connection.getTokenAccountBalance(account)).value.amount
  }

  function checkReasons(placement: PlacementJson): void {
    assert.equal(placement.chosen, bySlug.get('a100-fits'))
    const row = (slug: string) => placement.markets.find((r) => r.slug === slug)!
    assert.equal(row('a100-fits').chosen, true)
    assert.equal(row('a100-fits').rank, 1)
    assert.match(row('a100-fits').reason, /^fits, 1 free node/)
    assert.equal(row('h100-full').fits, true)
    assert.equal(row('h100-full').freeNodes, 0)
    assert.equal(row('h100-full').reason, 'fits, but no free node now')
    assert.equal(row('localnet').fits, false)
    assert.deepEqual(row('localnet').lacks, ['12 GB VRAM < 40 GB'])
    assert.equal(row('localnet').reason, 'does not fit: 12 GB VRAM < 40 GB')
  }

  it('--min-vram 40 --wait runs on the market that fits; --json names why each other was passed over', async () => {
    const result = await run(['job', 'post', file, '--min-vram', '40', '--wait', '--json'])
    assert.equal(result.code, 0, result.stderr)
    const report = JSON.parse(result.stdout) as {market: string; status: string; placement: PlacementJson}
    assert.equal(report.market, bySlug.get('a100-fits'))
    assert.equal(report.status, 'COMPLETED')
    assert.equal(report.placement.need.minVram, 40)
    assert.equal(report.placement.payment, 'token')
    checkReasons(report.placement)
  })

  it('prints the table, in --dry-run too, and places by the definition’s required_vram', async () => {
    const posted = await run(['job', 'post', file, '--min-vram', '40'])
    assert.equal(posted.code, 0, posted.stderr)
    const lines = posted.stdout.split('\n')
    const header = lines.findIndex((l) => /MARKET +FREE +TOKENS\/H +WHY/.test(l))
    assert.ok(header > 0, posted.stdout)
    assert.match(lines[header - 1]!, /^Placed on a100-fits/)
    assert.match(lines[header + 1]!, /^ +\* +a100-fits +1 +4\.32 +fits, 1 free node/)
    assert.match(lines[header + 2]!, /^ +2 +h100-full +0 +1\.8 +fits, but no free node now$/)
    assert.match(lines[header + 3]!, /^ +3 +localnet +1 +0\.36 +does not fit: 12 GB VRAM < 40 GB$/)

    const vram = join(box.dir, 'vram.json')
    const withVram = structuredClone(DEFINITION) as {ops: {args: Record<string, unknown>}[]}
    withVram.ops[0]!.args.required_vram = 40
    writeFileSync(vram, JSON.stringify(withVram))
    const dry = await run(['job', 'post', vram, '--dry-run'])
    assert.equal(dry.code, 0, dry.stderr)
    assert.match(dry.stdout, new RegExp(`^ +Market +${bySlug.get('a100-fits')}$`, 'm'))
    assert.match(dry.stdout, /\* +a100-fits/)
    const json = await run(['job', 'post', vram, '--dry-run', '--json'])
    assert.equal(json.code, 0, json.stderr)
    const report = JSON.parse(json.stdout) as {dryRun: true; market: string; placement: PlacementJson}
    assert.equal(report.market, bySlug.get('a100-fits'))
    checkReasons(report.placement)
  })

  it('nothing that fits is exit 3 naming the nearest market and what it lacks; nothing paid', async () => {
    const before = await tokens()
    const result = await run(['job', 'post', file, '--min-vram', '100', '--gpu-model', 'NVIDIA A100 80GB PCIe'])
    assert.equal(result.code, 3)
    assert.match(result.stderr, /^Error: no market fits the job: the nearest, a100-fits, lacks 80 GB VRAM < 100 GB$/m)
    const json = await run(['job', 'post', file, '--min-vram', '100', '--json'])
    assert.equal(json.code, 3)
    const {error} = JSON.parse(json.stdout) as {error: {code: string; nearest: {slug: string; lacks: string[]}}}
    assert.equal(error.code, 'no_market_fits')
    assert.equal(error.nearest.lacks.length, 1)
    assert.equal(await tokens(), before, 'nothing paid')
  })

  it('refuses a bad need with exit 2, and an explicit market that does not fit with exit 3 under --strict', async () => {
    const before = await tokens()
    for (const [args, pattern] of [
      [['--min-vram', '0'], /--min-vram 0 is not a positive number/],
      [['--max-price', 'cheap'], /--max-price cheap is not a positive number/],
      [['--gpu-model', 'RTX 9999'], /no market lists the GPU model "RTX 9999"/],
    ] as const) {
      const result = await run(['job', 'post', file, ...args])
      assert.equal(result.code, 2, result.stderr)
      assert.match(result.stderr, pattern)
    }
    const unknown = await run(['job', 'post', file, '--gpu-model', 'RTX 9999'])
    assert.match(
      unknown.stderr,
      /Hint: the known GPU models: NVIDIA A100 80GB PCIe, NVIDIA GeForce RTX 3060, NVIDIA H100 80GB HBM3/,
    )
    const small = bySlug.get('localnet')!
    const strict = await run(['job', 'post', file, '--market', small, '--min-vram', '40', '--strict', '--json'])
    assert.equal(strict.code, 3)
    assert.equal((JSON.parse(strict.stdout) as {error: {code: string}}).error.code, 'market_does_not_fit')
    assert.equal(await tokens(), before, 'nothing paid')
    // Without --strict the named market is used all the same, with a warning.
    const warned = await run(['job', 'post', file, '--market', small, '--min-vram', '40', '--dry-run', '--json'])
    assert.equal(warned.code, 0, warned.stderr)
    assert.match(warned.stderr, /^Warning: market localnet does not fit the job's need: 12 GB VRAM < 40 GB/m)
    const report = JSON.parse(warned.stdout) as {market: string; placement?: unknown; warnings: string[]}
    assert.equal(report.market, small)
    assert.equal(report.placement, undefined)
    assert.equal(report.warnings.length, 1)
  })
  it('job run and deployment create place by the same need', async () => {
    const ran = await run([
      'job',
      'run',
      '--image',
      'docker.io/library/ubuntu:24.04',
      '--min-vram',
      '40',
      '--dry-run',
      '--json',
      '--',
      'echo',
      'placed',
    ])
    assert.equal(ran.code, 0, ran.stderr)
    checkReasons((JSON.parse(ran.stdout) as {placement: PlacementJson}).placement)
    const created = await run([
      'deployment',
      'create',
      '--file',
      file,
      '--timeout',
      '10m',
      '--min-vram',
      '40',
      '--json',
    ])
    assert.equal(created.code, 0, created.stderr)
    const deployment = JSON.parse(created.stdout) as {market: string; placement: PlacementJson}
    assert.equal(deployment.market, bySlug.get('a100-fits'))
    checkReasons(deployment.placement)
    const refused = await run([
      'deployment',
      'create',
      '--file',
      file,
      '--timeout',
      '10m',
      '--market-type',
      'premium',
      '--max-price',
      '1',
      '--min-vram',
      '40',
    ])
    assert.equal(refused.code, 3)
    assert.match(
      refused.stderr,
      /^Error: no market fits the job: the nearest, h100-full, lacks 1\.8 tokens\/h > 1 tokens\/h$/m,
    )
  })
})
