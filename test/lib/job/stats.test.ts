/**
 * `job stats` reading what a node sends (issue 40): untrusted answers are reduced to the TaskStat shape, and the
 * table shows each operation's latest sample, `-` for what is unknown.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {setTimeout as sleep} from 'node:timers/promises'

import {Keypair} from '@solana/web3.js'

import {GpunetError} from '../../../src/lib/errors.js'
import {jobStats, parseStats, statsTable} from '../../../src/lib/job/stats.js'
import {walletFromBytes} from '../../../src/lib/keys/wallet.js'
import type {MarketNetwork} from '../../../src/lib/market/connect.js'
import {NETWORK_PRESETS} from '../../../src/lib/market/index.js'
import type {TaskStat} from '../../../src/lib/node-api/stats-protocol.js'
import {cidDigest, startStandinRpc, type StandinRpc} from '../../helpers/standin.js'
import {putJobAccount, putRunAccount} from '../../helpers/standin-network.js'
import {JOB_CID} from '../../helpers/market.js'

const stat = (opId: string, timestamp: number, cpu: unknown) => ({
  opId,
  timestamp,
  cpu: {cpu_percent: cpu},
  memory: {memory_usage: 2048, memory_limit: null, memory_percent: null},
  disk: {read: 0, write: 1536},
  network: {received: null, sent: null},
})

describe('job stats: reading a node answer', () => {
  it('keeps the TaskStat shape: bad entries dropped, figures that are not finite numbers null', () => {
    const parsed = parseStats(JSON.stringify([stat('a', 1, 'lots'), {opId: 7}, null, 'x', {opId: 'b', cpu: 5}]))
    assert.equal(parsed.length, 2)
    assert.equal(parsed[0]!.cpu.cpu_percent, null)
    assert.deepEqual(parsed[1]!.memory, {memory_usage: null, memory_limit: null, memory_percent: null})
    assert.deepEqual(parseStats('{"not": "an array"}'), [])
    assert.throws(() => parseStats('<html>'), /not JSON/)
  })

  it("shows each operation's latest sample, `-` where unknown, no control characters", () => {
    const rows = statsTable(parseStats(JSON.stringify([stat('a', 2, 50), stat('a', 1, 10), stat('b\x1b[2J', 1, null)])))
    assert.equal(rows.length, 3)
    assert.match(rows[0]!, /^OPERATION +CPU %/)
    assert.match(rows[1]!, /^a +50\.0 +2\.0 KiB \/ - +- +0 B \/ 1\.5 KiB +- \/ -$/)
    assert.match(rows[2]!, /^b\?\[2J +- /)
    assert.match(statsTable([])[1]!, /no operation running/)
  })
})

describe('job stats --follow: reading a node stream', function () {
  this.timeout(20_000)
  const poster = Keypair.generate()
  const job = Keypair.generate().publicKey
  let rpc: StandinRpc
  let node: Server
  let nodeUrl: string
  /** What the node stand-in streams: each chunk written as it is, then the stream ends (unless `holdOpen`). */
  let chunks: string[]
  /** The stream is left open after its chunks, until the client closes it. */
  let holdOpen = false

  before(async () => {
    rpc = await startStandinRpc()
    putJobAccount(rpc, 'devnet', job, {ipfsJob: cidDigest(JOB_CID), timeout: 3600n, state: 0, payer: poster.publicKey})
    putRunAccount(rpc, 'devnet', job, Keypair.generate().publicKey, poster.publicKey)
    node = createServer((_req, res) => {
      void (async () => {
        res.writeHead(200, {'content-type': 'text/event-stream'})
        for (const chunk of chunks) {
          if (res.destroyed) return
          res.write(chunk)
          // Apart, so the client reads each before the next (written at once, TCP may join them).
          await sleep(100)
        }
        if (holdOpen) await once(res, 'close')
        else res.end()
      })()
    })
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve))
    nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}`
  })
  after(async () => {
    node.closeAllConnections()
    await new Promise((resolve) => node.close(resolve))
    await rpc.close()
  })

  const devnet = () =>
    ({
      name: 'devnet',
      rpcUrl: rpc.url,
      programId: NETWORK_PRESETS.devnet.programId,
      nodeApiUrl: () => nodeUrl,
    }) as unknown as MarketNetwork

  async function follow(): Promise<TaskStat[][]> {
    const frames: TaskStat[][] = []
    await jobStats(devnet(), job, {
      follow: true,
      wallet: async () => walletFromBytes(poster.secretKey),
      frame: (stats) => frames.push(stats),
    })
    return frames
  }

  it('shows each event of the stream as it comes, one split across chunks too', async () => {
    const event = `data: ${JSON.stringify([stat('a', 1, 5)])}\n\n`
    chunks = [event, event.slice(0, 20), `${event.slice(20)}: a comment\n\n`]
    const frames = await follow()
    assert.deepEqual(
      frames.map((f) => f.map((s) => [s.opId, s.cpu.cpu_percent])),
      [[['a', 5]], [['a', 5]]],
    )
  })

  // A node that never ends an event would otherwise grow the client's memory without bound.
  it('refuses an event past 1 MiB before it ends, and reads one just under it', async () => {
    // The event's end never comes (on a loaded machine a later chunk could join the first in one read).
    chunks = [`data: [${' '.repeat(1024 * 1024)}`]
    holdOpen = true
    await assert.rejects(
      follow(),
      (e: unknown) => e instanceof GpunetError && e.code === 'node_api_invalid' && /oversized event/.test(e.message),
    )
    holdOpen = false
    // The whole event is in one chunk, and read before the bound is checked: it is shown.
    chunks = [`data: [${' '.repeat(1024 * 1024 - 100)}]\n\n`]
    assert.deepEqual(await follow(), [[]])
  })
})
