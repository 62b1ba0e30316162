import {strict as assert} from 'node:assert'

import {Keypair} from '@solana/web3.js'

import {type LocalnetStatus} from '../../../src/lib/localnet/server/control.js'
import {useCliSandbox} from '../../helpers/cli-localnet.js'

describe('gpunet market list and get on localnet', function () {
  this.timeout(60_000)
  const box = useCliSandbox()

  it("lists the localnet's market (started on demand) and shows it with its queue", async () => {
    const listed = await box.run(['market', 'list', '--json'])
    assert.equal(listed.code, 0, listed.stderr)
    const status = JSON.parse((await box.run(['localnet', 'status', '--json'])).stdout) as LocalnetStatus
    const {markets, defaultMarket} = JSON.parse(listed.stdout) as {
      defaultMarket: string
      markets: {market: string; address: string; queue: {kind: string}; accessKey: string | null; jobTimeout: number}[]
    }
    assert.equal(defaultMarket, status.market)
    assert.deepEqual(
      markets.map((m) => [m.market, m.address]),
      [[status.market, status.market]],
      'the market named as a job names it; `address` deprecated, kept',
    )
    assert.equal(markets[0]!.accessKey, null)

    const got = await box.run(['market', 'get', status.market!, '--json'])
    assert.equal(got.code, 0, got.stderr)
    const detail = JSON.parse(got.stdout) as {market: string; jobTimeout: number; queued: string[]}
    assert.equal(detail.market, status.market)
    assert.equal(detail.jobTimeout, markets[0]!.jobTimeout)
    assert.ok(Array.isArray(detail.queued))

    const bad = await box.run(['market', 'get', 'not-an-address'])
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /the market "not-an-address" is not a Solana address/)
  })

  it('a market that is not there is exit 7, with a hint about markets, not jobs', async () => {
    const missing = await box.run(['market', 'get', Keypair.generate().publicKey.toBase58(), '--json'])
    assert.equal(missing.code, 7)
    const {error} = JSON.parse(missing.stdout) as {error: {code: string; hint: string}}
    assert.equal(error.code, 'market_not_found')
    assert.match(error.hint, /gpunet market list/)
    assert.doesNotMatch(error.hint, /job|delist/)
  })
})
