import assert from 'node:assert/strict'

import {parseMarketsText} from '../../../src/lib/localnet/markets/markets-file.js'
import {DEFAULT_MARKETS} from '../../../src/lib/localnet/markets/default-markets.js'
import {isGpunetError} from '../../../src/lib/errors.js'
import {ONE_MARKET, ONE_MARKET_YAML} from '../../helpers/markets.js'

/** The refusal of `text` as a markets file: its exit code, message and place. */
async function refusal(text: string, file = 'markets.yaml') {
  try {
    await parseMarketsText(text, file)
  } catch (error) {
    assert.ok(isGpunetError(error), String(error))
    return {code: error.code, exitCode: error.exitCode, message: error.message, fields: error.fields}
  }
  assert.fail('the file was taken')
}

const TWO = `markets:
  - slug: localnet
    gpus: [RTX 3060]
    vram: 12
    price: 0.0001
  - slug: big
    type: PREMIUM
    gpus: [H100, H200]
    vram: 80
    price: 0.002
    networkFee: 10
    requiredImages: [ubuntu:24.04]
    nodes:
      - count: 2
        gpu: H200
        vram: 141
        ram: 512
        country: US
        cached: [ubuntu:24.04]
`

describe('markets file', () => {
  it('reads the one-market file into the spec the helpers pin', async () => {
    assert.deepEqual(await parseMarketsText(ONE_MARKET_YAML, 'one.yaml'), ONE_MARKET)
  })

  it('fills defaults, repeats counted nodes, and reads JSON as well', async () => {
    const spec = await parseMarketsText(TWO, 'two.yaml')
    const big = spec.markets[1]!
    assert.equal(spec.markets[0]!.slug, 'localnet')
    assert.equal(spec.markets[0]!.type, 'COMMUNITY')
    assert.equal(spec.markets[0]!.nodes.length, 1, 'a market that lists no nodes has one')
    assert.deepEqual(spec.markets[0]!.nodes[0], {gpu: 'RTX 3060', vram: 12, ram: 32, country: 'NL', cached: []})
    assert.equal(big.priceUnits, '2000')
    assert.equal(big.networkFee, 10)
    assert.equal(big.nodes.length, 2)
    assert.deepEqual(big.nodes[1], {gpu: 'H200', vram: 141, ram: 512, country: 'US', cached: ['ubuntu:24.04']})
    const json = JSON.stringify({markets: [{slug: 'localnet', gpus: ['RTX 3060'], vram: 12, price: 0.0001}]})
    assert.equal((await parseMarketsText(json, 'm.json')).markets[0]!.priceUnits, '100')
  })

  it('puts the default market first wherever the file has it', async () => {
    const text = `markets:\n  - {slug: other, gpus: [A], vram: 8, price: 0}\n  - {slug: localnet, gpus: [B], vram: 8, price: 0}\n`
    assert.deepEqual(
      (await parseMarketsText(text, 'm.yaml')).markets.map((m) => m.slug),
      ['localnet', 'other'],
    )
  })

  it('has default markets of at least three GPUs, VRAM sizes, types and prices, the first the default', () => {
    const markets = DEFAULT_MARKETS.markets
    assert.ok(markets.length >= 3)
    assert.equal(markets[0]!.slug, 'localnet')
    assert.equal(markets[0]!.priceUnits, '100', 'the default market keeps its price')
    for (const member of ['vram', 'type', 'priceUnits'] as const) {
      assert.equal(new Set(markets.map((m) => m[member])).size, markets.length, member)
    }
    assert.equal(new Set(markets.map((m) => m.gpus[0])).size, markets.length)
    for (const market of markets) for (const node of market.nodes) assert.ok(node.vram >= market.vram)
  })

  it('refuses an unknown member at its name, exit 2', async () => {
    const text = `markets:\n  - slug: localnet\n    gpus: [A]\n    vram: 8\n    price: 0\n    colour: red\n`
    const r = await refusal(text)
    assert.equal(r.exitCode, 2)
    assert.equal(r.code, 'markets_file_invalid')
    assert.equal(r.message, 'markets.yaml:6:5: unknown member `colour`')
    assert.deepEqual(r.fields, {file: 'markets.yaml', line: 6, column: 5})
  })

  it('refuses a second market of one slug at its slug', async () => {
    const text = `markets:\n  - {slug: localnet, gpus: [A], vram: 8, price: 0}\n  - slug: localnet\n    gpus: [B]\n    vram: 8\n    price: 0\n`
    const r = await refusal(text)
    assert.equal(r.exitCode, 2)
    assert.match(r.message, /^markets\.yaml:3:11: a second market has the slug `localnet`$/)
  })

  it('refuses a node with less VRAM than its market says, at the node', async () => {
    const r = await refusal(TWO.replace('vram: 141', 'vram: 40'))
    assert.equal(r.exitCode, 2)
    assert.equal(
      r.message,
      "markets.yaml:16:15: a node of `big` has 40 GB of VRAM, less than the market's 80 GB (its lowest)",
    )
  })

  it('refuses a negative price at the price', async () => {
    const r = await refusal(TWO.replace('price: 0.002', 'price: -0.002'))
    assert.equal(r.exitCode, 2)
    assert.equal(r.message, 'markets.yaml:10:12: `markets.1.price`: Too small: expected number to be >=0')
  })

  it('refuses a file without the default market, a GPU model its market lacks, and broken YAML', async () => {
    assert.match(
      (await refusal(`markets:\n  - {slug: other, gpus: [A], vram: 8, price: 0}\n`)).message,
      /^markets\.yaml:1:1: no market has the slug `localnet`/,
    )
    assert.match(
      (await refusal(TWO.replace('gpu: H200', 'gpu: A100'))).message,
      /^markets\.yaml:15:14: `A100` is not one of/,
    )
    const broken = await refusal('markets: [\n')
    assert.equal(broken.exitCode, 2)
    assert.match(broken.message, /^markets\.yaml:\d+:\d+: /)
  })
})
