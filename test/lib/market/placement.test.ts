/**
 * Placement (src/lib/market/jobs/placement.ts): which market a job's need puts it on, and why each other was passed
 * over; and the need as the flags and the definition give it (src/lib/job/placing.ts).
 */
import {strict as assert} from 'node:assert'

import fc from 'fast-check'

import {PublicKey} from '@solana/web3.js'

import {checkGpuModels, chooseMarket, definitionNeed, jobNeed, parseNeed} from '../../../src/lib/job/placing.js'
import {isGpunetError} from '../../../src/lib/errors.js'
import {
  type Payment,
  placeJob,
  placementLines,
  type PlacementMarket,
  type PlacementNeed,
} from '../../../src/lib/market/jobs/placement.js'

const NO_NEED: PlacementNeed = {gpuModels: [], minVram: null, maxPrice: null, marketType: null, images: []}

function market(over: Partial<PlacementMarket> & {market: string}): PlacementMarket {
  return {
    slug: over.market,
    type: 'COMMUNITY',
    gpuModels: ['NVIDIA GeForce RTX 3060'],
    lowestVram: 12,
    tokenPerHour: 0.36,
    usdPerHour: 0.18,
    networkFeePercent: 0,
    freeNodes: 1,
    requiredImages: [],
    ...over,
  }
}

/** The three markets: one full, one cheap whose GPUs are too small, one that fits. */
const THREE = [
  market({
    market: 'full',
    type: 'PREMIUM',
    gpuModels: ['NVIDIA H100'],
    lowestVram: 80,
    tokenPerHour: 1.8,
    freeNodes: 0,
  }),
  market({market: 'small', lowestVram: 12, tokenPerHour: 0.36, freeNodes: 1}),
  market({market: 'fits', type: 'OTHER', gpuModels: ['NVIDIA A100 80GB PCIe'], lowestVram: 80, tokenPerHour: 4.32}),
]

function expectError(run: () => unknown, code: string, exitCode: number): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(isGpunetError(error))
    assert.equal(error.code, code)
    assert.equal(error.exitCode, exitCode)
    return true
  })
}

describe('placement', () => {
  it('puts a 40 GB job on the market that fits and has a free node, and says why each other was passed over', () => {
    const placement = placeJob(THREE, {...NO_NEED, minVram: 40}, 'token')
    assert.equal(placement.chosen, 'fits')
    assert.equal(placement.nearest, null)
    const byMarket = new Map(placement.markets.map((row) => [row.market, row]))
    assert.equal(byMarket.get('fits')!.chosen, true)
    assert.match(byMarket.get('fits')!.reason, /^fits, 1 free node/)
    assert.equal(byMarket.get('full')!.reason, 'fits, but no free node now')
    assert.deepEqual(byMarket.get('small')!.lacks, ['12 GB VRAM < 40 GB'])
    assert.equal(byMarket.get('small')!.fits, false)
    assert.deepEqual(
      placement.markets.map((row) => [row.rank, row.market]),
      [
        [1, 'fits'],
        [2, 'full'],
        [3, 'small'],
      ],
    )
    const lines = placementLines(placement)
    assert.match(lines[0]!, /MARKET +FREE +TOKENS\/H +WHY/)
    assert.match(lines[1]!, /^\* +fits/)
  })

  it('prices by the way the job pays: the chain in the token, the USD price with its fee for credits', () => {
    const a = market({market: 'a', tokenPerHour: 1, usdPerHour: 0.3, networkFeePercent: 0})
    const b = market({market: 'b', tokenPerHour: 2, usdPerHour: 0.2, networkFeePercent: 10})
    assert.equal(placeJob([a, b], NO_NEED, 'token').chosen, 'a')
    const credits = placeJob([a, b], NO_NEED, 'credits')
    assert.equal(credits.chosen, 'b')
    assert.equal(credits.markets[0]!.pricePerHour, 0.22)
    assert.equal(credits.markets[1]!.reason, 'fits, but costs more: $0.3/h with the network fee')
  })

  it('between equal prices, prefers the market that lists the image; a price cap and a type are fits', () => {
    const image = 'docker.io/ollama/ollama:latest'
    const plain = market({market: 'a'})
    const holding = market({market: 'z', requiredImages: [image]})
    const placed = placeJob([plain, holding], {...NO_NEED, images: [image]}, 'token')
    assert.equal(placed.chosen, 'z')
    assert.equal(placed.markets[1]!.reason, 'fits at the same price, but does not list the image')
    const capped = placeJob(THREE, {...NO_NEED, maxPrice: 1}, 'token')
    assert.equal(capped.chosen, 'small')
    assert.deepEqual(capped.markets.find((r) => r.market === 'fits')!.lacks, ['4.32 tokens/h > 1 tokens/h'])
    const premium = placeJob(THREE, {...NO_NEED, marketType: 'premium'}, 'token')
    assert.equal(premium.chosen, 'full')
    assert.match(premium.markets[0]!.reason, /no free node/)
  })

  it('with nothing that fits, chooses nothing and names the nearest market and what it lacks', () => {
    const placement = placeJob(THREE, {...NO_NEED, minVram: 100, gpuModels: ['NVIDIA GeForce RTX 3060']}, 'token')
    assert.equal(placement.chosen, null)
    assert.deepEqual(placement.nearest, {market: 'small', slug: 'small', lacks: ['12 GB VRAM < 100 GB']})
    assert.ok(placement.markets.every((row) => !row.chosen && !row.fits))
  })

  it('treats what the host manager did not say as not fitting, and a missing USD price as none for credits', () => {
    const unknown = market({market: 'u', gpuModels: null, lowestVram: null, usdPerHour: null})
    const placement = placeJob([unknown], {...NO_NEED, gpuModels: ['x'], minVram: 1, maxPrice: 5}, 'credits')
    assert.deepEqual(placement.markets[0]!.lacks, ['GPU models unknown', 'VRAM unknown', 'no USD price'])
  })
})

describe('the need', () => {
  it('refuses a VRAM or price that is not a positive number, and a type that is none (exit 2)', () => {
    for (const bad of ['0', '-4', 'abc', '1e3', '', 'NaN', 'Infinity']) {
      expectError(() => parseNeed({minVram: bad}), 'min_vram_invalid', 2)
      expectError(() => parseNeed({maxPrice: bad}), 'max_price_invalid', 2)
    }
    expectError(() => parseNeed({marketType: 'other'}), 'market_type_invalid', 2)
    assert.deepEqual(parseNeed({minVram: '40', maxPrice: '0.5', marketType: 'PREMIUM', gpuModels: [' A100 ']}), {
      gpuModels: ['A100'],
      minVram: 40,
      maxPrice: 0.5,
      marketType: 'premium',
    })
  })

  it('refuses an unknown GPU model, naming the known ones', () => {
    assert.throws(
      () => checkGpuModels(['RTX 9999'], ['NVIDIA A100 80GB PCIe', 'NVIDIA GeForce RTX 3060']),
      (error: unknown) => {
        assert.ok(isGpunetError(error))
        assert.equal(error.code, 'gpu_model_unknown')
        assert.equal(error.exitCode, 2)
        assert.match(error.hint!, /NVIDIA A100 80GB PCIe, NVIDIA GeForce RTX 3060/)
        return true
      },
    )
    checkGpuModels(['nvidia geforce rtx 3060'], ['NVIDIA GeForce RTX 3060'])
  })

  it("reads the definition's required_vram (an operation's and meta.system_resources', the largest) and images", () => {
    const document = {
      meta: {system_resources: {required_vram: '24'}},
      ops: [{args: {image: 'a', required_vram: 40}}, {args: {image: 'b', required_vram: 8}}],
    }
    assert.deepEqual(definitionNeed(document), {minVram: 40, images: ['a', 'b']})
    assert.deepEqual(definitionNeed({meta: {system_resources: {required_vram: 16}}, ops: []}), {
      minVram: 16,
      images: [],
    })
    const need = jobNeed(parseNeed({minVram: '12'}), document)
    assert.equal(need.minVram, 40)
    assert.equal(jobNeed(parseNeed({minVram: '48'}), document).minVram, 48)
  })
})

describe('chooseMarket without the host manager', () => {
  // A chain of no market and no host manager: what placement may still decide.
  const net = {
    name: 'devnet' as const,
    connection: {getProgramAccounts: async () => [], rpcEndpoint: 'http://127.0.0.1:1'} as never,
    programId: PublicKey.default,
    hostManagerUrl: null,
  }
  const need = {...NO_NEED, minVram: 40}

  it("leaves the market as it was, with a warning, when only the definition's required_vram asked", async () => {
    const notes: string[] = []
    const choice = await chooseMarket(net, {
      explicit: null,
      need,
      payment: 'token',
      strict: false,
      flagsAsked: false,
      note: (line) => notes.push(line),
    })
    assert.deepEqual(choice, {market: null, placement: null, warnings: [notes.at(-1)!.replace(/^Warning: /, '')]})
    assert.match(notes.at(-1)!, /required_vram \(40 GB\) was not checked/)
  })

  it('is exit 5 when a flag asked, and nothing when nothing is asked', async () => {
    const options = {explicit: null, payment: 'token' as const, strict: false, flagsAsked: true, note: () => {}}
    await assert.rejects(chooseMarket(net, {...options, need}), (error: unknown) => {
      assert.ok(isGpunetError(error))
      assert.equal(error.code, 'host_manager_unavailable')
      assert.equal(error.exitCode, 5)
      return true
    })
    assert.equal(await chooseMarket(net, {...options, need: NO_NEED}), null)
  })
})

// The generated cases: placement against a reference written apart from it, from the order of docs/jobs.md.
const SEED = 56
const RUNS = 500
const MODELS = ['RTX 3060', 'RTX 4090', 'A100', 'H100']
const IMAGES = ['img/a', 'img/b', 'img/c']

const marketArb = fc.record({
  type: fc.constantFrom('PREMIUM', 'COMMUNITY', 'OTHER', null),
  gpuModels: fc.option(fc.subarray(MODELS), {nil: null}),
  lowestVram: fc.option(fc.constantFrom(8, 12, 16, 24, 40, 48, 80), {nil: null}),
  tokenPerHour: fc.constantFrom(0.36, 1, 1.44, 2, 4.32),
  usdPerHour: fc.option(fc.constantFrom(0.1, 0.2, 0.5, 1), {nil: null}),
  networkFeePercent: fc.constantFrom(0, 10, 25),
  freeNodes: fc.nat({max: 2}),
  requiredImages: fc.option(fc.subarray(IMAGES), {nil: null}),
})

const needArb = fc.record({
  gpuModels: fc.subarray(MODELS, {maxLength: 2}),
  minVram: fc.option(fc.constantFrom(8, 12, 20, 40, 80), {nil: null}),
  maxPrice: fc.option(fc.constantFrom(0.2, 0.5, 1, 2, 5), {nil: null}),
  marketType: fc.constantFrom('premium' as const, 'community' as const, null),
  images: fc.subarray(IMAGES, {maxLength: 2}),
})

/** Does `m` fit `need`: the rules of item 1 written again, not called. */
function fitsReference(m: PlacementMarket, need: PlacementNeed, payment: Payment): boolean {
  const price =
    payment === 'token' ? m.tokenPerHour : m.usdPerHour === null ? null : m.usdPerHour * (1 + m.networkFeePercent / 100)
  if (need.gpuModels.length > 0 && !(m.gpuModels ?? []).some((g) => need.gpuModels.includes(g))) return false
  if (need.minVram !== null && (m.lowestVram === null || m.lowestVram < need.minVram)) return false
  if (need.marketType !== null && m.type !== need.marketType.toUpperCase()) return false
  if (need.maxPrice !== null && (price === null || price > need.maxPrice + 1e-9)) return false
  return true
}

/** The sort key of the order: a free node, the price (unknown last), more of the job's images listed, the address. */
function keyReference(m: PlacementMarket, need: PlacementNeed, payment: Payment): [number, number, number, string] {
  const usd = m.usdPerHour === null ? Infinity : Math.round(m.usdPerHour * (1 + m.networkFeePercent / 100) * 1e6) / 1e6
  const price = payment === 'token' ? m.tokenPerHour : usd
  const listed = need.images.filter((i) => (m.requiredImages ?? []).includes(i)).length
  return [m.freeNodes > 0 ? 0 : 1, price, -listed, m.market]
}

function before(a: [number, number, number, string], b: [number, number, number, string]): boolean {
  for (let i = 0; i < 4; i++) if (a[i] !== b[i]) return a[i]! < b[i]!
  return false
}

describe('placement over generated markets and needs', () => {
  it(`never chooses a market that does not fit, and chooses the first by the order (${RUNS} cases)`, () => {
    let cases = 0
    let chose = 0
    let none = 0
    fc.assert(
      fc.property(
        fc.array(marketArb, {maxLength: 6}),
        needArb,
        fc.constantFrom<Payment>('token', 'credits'),
        (shapes, need, payment) => {
          cases++
          const markets = shapes.map((shape, i) => ({...shape, market: `m${i}`, slug: `s${i}`}))
          const placement = placeJob(markets, need, payment)
          const fitting = markets.filter((m) => fitsReference(m, need, payment))
          assert.equal(placement.markets.length, markets.length)
          if (fitting.length === 0) {
            none++
            assert.equal(placement.chosen, null)
            assert.ok(placement.markets.every((row) => !row.fits && !row.chosen))
            if (markets.length > 0) {
              const least = Math.min(...placement.markets.map((row) => row.lacks.length))
              assert.equal(placement.markets.find((r) => r.market === placement.nearest!.market)!.lacks.length, least)
            }
            return
          }
          chose++
          const chosen = markets.find((m) => m.market === placement.chosen)
          assert.ok(chosen, 'a market is chosen when one fits')
          assert.ok(fitsReference(chosen, need, payment), `${chosen.market} does not fit`)
          const best = fitting.reduce((a, b) =>
            before(keyReference(b, need, payment), keyReference(a, need, payment)) ? b : a,
          )
          assert.equal(placement.chosen, best.market)
          // Every row says whether it fits as the reference does, and the fitting ones come first, in order.
          for (const row of placement.markets) {
            const m = markets.find((x) => x.market === row.market)!
            assert.equal(row.fits, fitsReference(m, need, payment), row.market)
            assert.equal(row.fits, row.lacks.length === 0)
          }
          const ranked = placement.markets.filter((r) => r.fits).map((r) => markets.find((x) => x.market === r.market)!)
          for (let i = 1; i < ranked.length; i++) {
            assert.ok(!before(keyReference(ranked[i]!, need, payment), keyReference(ranked[i - 1]!, need, payment)))
          }
        },
      ),
      {seed: SEED, numRuns: RUNS},
    )
    assert.equal(cases, RUNS)
    // Both sides are exercised: cases where a market is chosen and cases where none fits.
    assert.ok(chose >= 100 && none >= 20, `chosen ${chose}, none ${none}`)
  })
})
