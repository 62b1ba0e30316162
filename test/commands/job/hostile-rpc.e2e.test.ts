/**
 * What an RPC server or an indexer answers cannot crash the client (issue 43): a stand-in devnet RPC that serves
 * jobs program accounts cut short or holding times no date can hold, and an indexer whose prices and times are
 * no numbers. Each is a clear answer with its exit code, never an "unexpected failure".
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'

import {Keypair, PublicKey} from '@solana/web3.js'

import {NETWORK_PRESETS} from '../../../src/lib/market/networks.js'
import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, useCliSandbox} from '../../helpers/cli-localnet.js'
import {allocated, seedNetwork, SIZES} from '../../helpers/standin-network.js'
import {cidDigest, ipfsCid, rentExempt, startStandinRpc, type StandinRpc} from '../../helpers/standin.js'

describe('job get, logs and list against a hostile RPC server and indexer (stand-in devnet)', function () {
  this.timeout(60_000)
  const box: CliSandbox = useCliSandbox()
  let rpc: StandinRpc
  const wallet = Keypair.generate()
  const preset = NETWORK_PRESETS.devnet

  beforeEach(async () => {
    rpc = await startStandinRpc()
    seedNetwork(rpc, 'devnet', wallet.publicKey)
    writeFileSync(box.env.GPUNET_WALLET!, JSON.stringify([...wallet.secretKey]))
  })
  afterEach(async () => {
    await rpc.close()
  })

  const cli = (...args: string[]) =>
    runCli([...args, '--network', 'devnet', '--rpc', rpc.url], {
      env: {...box.env, GPUNET_IPFS_GATEWAY: 'http://127.0.0.1:9'},
    })

  it('a job account whose times no date holds is shown without them, not an unexpected failure', async () => {
    const job = Keypair.generate().publicKey
    const cid = await ipfsCid(new TextEncoder().encode('{}'))
    const data = allocated(
      'JobAccount',
      {
        ipfsJob: cidDigest(cid),
        timeout: 600n,
        state: 2,
        ipfsResult: new Uint8Array(32),
        market: preset.market!.toBase58(),
        node: Keypair.generate().publicKey.toBase58(),
        payer: wallet.publicKey.toBase58(),
        price: 10n,
        project: wallet.publicKey.toBase58(),
        timeEnd: 2n ** 62n,
        timeStart: 2n ** 61n,
      },
      SIZES.job,
    )
    rpc.set(job, {owner: preset.programId, lamports: rentExempt(SIZES.job), data})
    const out = await cli('job', 'get', job.toBase58(), '--json')
    assert.equal(out.code, 0, out.stderr)
    const report = JSON.parse(out.stdout) as {startedAt: string | null; endedAt: string | null; status: string}
    assert.deepEqual([report.status, report.startedAt, report.endedAt], ['COMPLETED', null, null])
  })

  it('a jobs program account cut short is exit 5 naming it, for get and logs; a run cut short is no run', async () => {
    const job = Keypair.generate().publicKey
    const full = allocated(
      'JobAccount',
      {
        ipfsJob: new Uint8Array(32),
        timeout: 600n,
        state: 0,
        ipfsResult: new Uint8Array(32),
        market: preset.market!.toBase58(),
        node: PublicKey.default.toBase58(),
        payer: wallet.publicKey.toBase58(),
        price: 10n,
        project: wallet.publicKey.toBase58(),
        timeEnd: 0n,
        timeStart: 0n,
      },
      SIZES.job,
    )
    rpc.set(job, {owner: preset.programId, lamports: rentExempt(SIZES.job), data: full.subarray(0, 40)})
    for (const command of ['get', 'logs']) {
      const out = await cli('job', command, job.toBase58(), '--json')
      assert.equal(out.code, 5, out.stdout + out.stderr)
      // get prints one document; logs prints JSON lines, the error last.
      const document = command === 'get' ? out.stdout : out.stdout.trim().split('\n').at(-1)!
      const error = (JSON.parse(document) as {error: {code: string; message: string}}).error
      assert.equal(error.code, 'account_unreadable')
      assert.match(error.message, new RegExp(`at ${job.toBase58()} that is no readable job`))
    }
    // Whole again, QUEUED; the only "run" the RPC node lists for it is cut short: it stays queued.
    rpc.set(job, {owner: preset.programId, lamports: rentExempt(SIZES.job), data: full})
    const run = allocated(
      'RunAccount',
      {
        job: job.toBase58(),
        node: Keypair.generate().publicKey.toBase58(),
        payer: wallet.publicKey.toBase58(),
        state: 0,
        time: 1,
      },
      SIZES.run,
    )
    rpc.set(Keypair.generate().publicKey, {
      owner: preset.programId,
      lamports: rentExempt(SIZES.run),
      data: run.subarray(0, 60),
    })
    const queued = await cli('job', 'get', job.toBase58(), '--json')
    assert.equal(queued.code, 0, queued.stderr)
    assert.equal((JSON.parse(queued.stdout) as {status: string}).status, 'QUEUED')
  })

  it('job list takes an indexer answer whose prices and times are no numbers', async () => {
    const address = Keypair.generate().publicKey.toBase58()
    const indexer = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json').end(
        JSON.stringify({
          totalJobs: 3,
          jobs: [
            {address, state: 2, price: 'abc', timeStart: 1e20, timeEnd: 'never', timeout: 600},
            {address, state: 1, price: 1.5, timeStart: '1700000000', timeout: 'x'},
            {address, state: 'RUNNING', price: -3, timeStart: -1e300, timeout: 600},
          ],
        }),
      )
    })
    await new Promise<void>((resolve) => indexer.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(indexer.address() as AddressInfo).port}`
      const out = await runCli(['job', 'list', '--network', 'devnet', '--rpc', rpc.url, '--json'], {
        env: {...box.env, GPUNET_INDEXER_URL: url},
      })
      assert.equal(out.code, 0, out.stderr)
      const list = JSON.parse(out.stdout) as {
        jobs: {state: string; startedAt: string | null; cost: {baseUnits: string}}[]
      }
      assert.equal(list.jobs.length, 3)
      assert.equal(list.jobs[0]!.startedAt, null)
      for (const job of list.jobs) assert.equal(job.cost.baseUnits, '0')
    } finally {
      await new Promise((resolve) => indexer.close(resolve))
    }
  })
})
