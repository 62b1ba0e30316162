/** Counted words in messages and reports (issue 25: "1 nodes", "0.004 needed" with no unit). */
import {strict as assert} from 'node:assert'

import {checkFunds} from '../../../src/lib/market/rpc/balances.js'
import {type MarketDetail, marketDetailLines, marketRows} from '../../../src/lib/market/jobs/markets.js'
import {amountText} from '../../../src/lib/market/jobs/report.js'
import {counted} from '../../../src/lib/text/words.js'
import {PublicKey} from '@solana/web3.js'

const amount = (n: number) => ({amount: n, unit: 'token' as const, baseUnits: String(n * 1e6)})

function market(queue: MarketDetail['queue']): MarketDetail {
  return {
    network: 'localnet',
    market: 'M',
    address: 'M',
    pricePerSecond: amount(0.1),
    jobTimeout: 60,
    jobExpiration: 86_400,
    queue,
    nodeStakeMinimum: amount(0),
    accessKey: null,
    authority: 'A',
    vault: 'V',
    pricePerHour: amount(360),
    freeNodes: queue.kind === 'nodes' ? queue.length : 0,
    queuedJobs: queue.kind === 'jobs' ? queue.length : 0,
    usdPerHour: null,
    hostManager: {
      slug: null,
      name: null,
      type: null,
      gpu_types: null,
      lowest_vram: null,
      usd_reward_per_hour: null,
      network_fee_percentage: null,
      required_images: null,
    },
    queued: [],
  }
}

describe('counted words', () => {
  it('says one without an s, any other count with it, and takes an irregular plural', () => {
    assert.equal(counted(1, 'node'), '1 node')
    assert.equal(counted(0, 'node'), '0 nodes')
    assert.equal(counted(2, 'job'), '2 jobs')
    assert.equal(counted(1n, 'job'), '1 job')
    assert.equal(counted(3, 'entry', 'entries'), '3 entries')
  })

  it("counts a market's queue: 1 node, 2 jobs, empty", () => {
    const rows = marketRows([market({kind: 'nodes', length: 1}), market({kind: 'jobs', length: 2})], 'none')
    // FREE and QUEUED: the nodes waiting, the jobs waiting.
    assert.match(rows[1]!, / 360 +- +1 +0 +60 s /)
    assert.match(rows[2]!, / 360 +- +0 +2 +60 s /)
    assert.ok(marketDetailLines(market({kind: 'jobs', length: 1})).some((l) => /^ {2}Queue\s+1 job waiting$/.test(l)))
    assert.ok(marketDetailLines(market({kind: 'empty', length: 0})).some((l) => /^ {2}Queue\s+empty$/.test(l)))
  })

  it('prints amounts exactly, from their base units, with the unit counted', () => {
    assert.equal(amountText({amount: 1e-9, unit: 'SOL', baseUnits: '1'}), '0.000000001 SOL')
    assert.equal(amountText({amount: 1, unit: 'token', baseUnits: '1000000'}), '1 token')
    assert.equal(amountText({amount: 0.5, unit: 'token', baseUnits: '500000'}), '0.5 tokens')
    assert.equal(amountText({amount: 1000, unit: 'token', baseUnits: '1000000000'}), '1000 tokens')
  })

  it('names the unit of what a wallet lacks', () => {
    assert.throws(
      () =>
        checkFunds(
          {lamports: 1_000n, tokens: 0n, tokenAccount: PublicKey.default, hasTokenAccount: true},
          {lamports: 4_287_360n, tokens: 0n},
        ),
      {message: 'the wallet cannot pay for this job: it has 0.000001 SOL, 0.00428736 SOL needed for fees and rent'},
    )
  })
})
