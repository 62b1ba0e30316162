/** The host manager's markets as gpunet reads them: a stranger's answer, bounded, checked and made printable. */
import {strict as assert} from 'node:assert'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {networkCatalog, readMarketCatalog} from '../../../src/lib/market/jobs/market-catalog.js'

const ADDRESS = '7nxXoihx65yRGZiGzWZsFMz8D7qwxFePNKvDBWZnxc41'

/** A host manager on 127.0.0.1 answering `/markets/` and `/markets/price` as `answer` says. */
async function hostManager(
  answer: (path: string) => {status: number; body: string},
): Promise<{url: string; server: Server}> {
  const server = createServer((req, res) => {
    const {status, body} = answer(req.url ?? '/')
    res.writeHead(status, {'content-type': 'application/json'})
    res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server}
}

const market = (over: Record<string, unknown> = {}) => ({
  address: ADDRESS,
  slug: 'rtx-4090',
  name: 'NVIDIA RTX 4090',
  type: 'PREMIUM',
  gpu_types: ['NVIDIA GeForce RTX 4090'],
  lowest_vram: 24,
  usd_reward_per_hour: 0.36,
  network_fee_percentage: 10,
  required_images: ['docker.io/ollama/ollama:latest'],
  sft: 'anything the network adds is ignored',
  ...over,
})

describe('the host manager catalog', () => {
  const servers: Server[] = []
  afterEach(() => servers.splice(0).forEach((s) => s.close()))
  const start = async (answer: (path: string) => {status: number; body: string}) => {
    const hm = await hostManager(answer)
    servers.push(hm.server)
    return hm.url
  }

  it('reads each market and the token price, with terminal control sequences stripped', async () => {
    const url = await start((path) =>
      path === '/markets/price'
        ? {status: 200, body: JSON.stringify({price: 0.42})}
        : {status: 200, body: JSON.stringify([market({name: 'RTX\u001b[2J\u001b]0;owned\u0007 4090'})])},
    )
    const catalog = await readMarketCatalog(url)
    assert.deepEqual(catalog.warnings, [])
    assert.equal(catalog.tokenUsd, 0.42)
    const read = catalog.markets!.get(ADDRESS)!
    assert.equal(read.name, 'RTX 4090')
    assert.equal(read.lowest_vram, 24)
    assert.deepEqual(read.required_images, ['docker.io/ollama/ollama:latest'])
  })

  it('leaves out a market in another shape, and says so', async () => {
    const url = await start((path) =>
      path === '/markets/price'
        ? {status: 200, body: '{"price": "cheap"}'}
        : {status: 200, body: JSON.stringify([market(), market({address: 'x', type: 'GOLD'}), 'not a market'])},
    )
    const catalog = await readMarketCatalog(url)
    assert.equal(catalog.markets!.size, 1)
    assert.equal(catalog.tokenUsd, null, 'a price that is not a number is none')
    assert.deepEqual(catalog.warnings, [
      `Warning: the host manager at ${url} listed 2 market(s) in a shape gpunet does not read; left out.`,
    ])
  })

  it('refuses an answer past 4 MiB, one that is not JSON, and a failing status, with the chain left to stand', async () => {
    for (const [body, status, words] of [
      [`[${'"x",'.repeat(1_200_000)}"x"]`, 200, /its answer is over 4194304 bytes/],
      ['<html>', 200, /its answer is not JSON/],
      ['{}', 503, /it answered 503/],
    ] as const) {
      const url = await start(() => ({status, body}))
      const catalog = await readMarketCatalog(url)
      assert.equal(catalog.markets, null)
      assert.match(catalog.warnings[0]!, words)
      assert.match(catalog.warnings[0]!, /GPU models, VRAM, type, USD prices and required images are missing/)
    }
  })

  it('with no host manager set, is empty and says which setting names one', async () => {
    const catalog = await networkCatalog(null)
    assert.equal(catalog.markets, null)
    assert.match(catalog.warnings[0]!, /hostManagerUrl setting, GPUNET_HOST_MANAGER_URL/)
  })
})
