/**
 * `job get` reads results in every format the network has written, and gpunet's own older one (issue 19):
 * fixtures typed with @nosana/types (not built by gpunet), served by a stand-in devnet RPC and gateway.
 */
import type {FlowState} from '@nosana/types'
import {Keypair, type PublicKey} from '@solana/web3.js'
import {strict as assert} from 'node:assert'
import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, useCliSandbox} from '../../helpers/cli-localnet.js'
import {
  cidDigest,
  ipfsCid,
  startStandinPinning,
  startStandinRpc,
  type StandinPinning,
  type StandinRpc,
} from '../../helpers/standin.js'
import {putJobAccount, seedNetwork} from '../../helpers/standin-network.js'

const DEFINITION = new TextEncoder().encode(
  JSON.stringify({
    version: '0.1',
    type: 'container',
    ops: [{id: 'hi', type: 'container/run', args: {image: 'alpine'}}],
  }),
)

const FLOW_STATE: FlowState = {
  status: 'failed',
  startTime: 1_700_000_000_000,
  endTime: 1_700_000_060_000,
  opStates: [
    {
      providerId: 'container',
      operationId: 'prepare',
      group: 'prepare',
      status: 'success',
      startTime: 1_700_000_000_000,
      endTime: 1_700_000_030_000,
      exitCode: 0,
      logs: [
        {type: 'stdout', log: 'downloading weights\n', timestamp: '2023-11-14T22:13:21.000Z'},
        {type: 'stderr', log: 'warning: slow disk\n', timestamp: '2023-11-14T22:13:22.000Z'},
      ],
      results: {checksum: 'abc123'},
      diagnostics: {reason: {hostShutDown: false, jobStopped: false, jobExpired: false}},
    },
    {
      providerId: 'container',
      operationId: '../escape/train',
      group: 'train',
      status: 'failed',
      startTime: 1_700_000_030_000,
      endTime: 1_700_000_060_000,
      exitCode: 3,
      logs: [{type: 'stdout', log: 'epoch 1\n', timestamp: '2023-11-14T22:13:51.000Z'}],
      diagnostics: {reason: {hostShutDown: false, jobStopped: false, jobExpired: false}},
    },
  ],
}

/**
 * What a network node pins for a job its expiry stopped (nosana-ci/nosana-cli: `getStatus` maps the stop reason
 * `expired` to `success`; runTaskManagerOperation gives each aborted operation the diagnostics reason below;
 * stopAllTaskManagerOperations marks one not yet started `success` with exit code 0): no error entry.
 */
const EXPIRED_FLOW_STATE: FlowState = {
  status: 'success',
  startTime: 1_700_000_000_000,
  endTime: 1_700_000_600_000,
  opStates: [
    {
      providerId: 'container',
      operationId: 'serve',
      group: 'serve',
      status: 'success',
      startTime: 1_700_000_000_000,
      endTime: 1_700_000_600_000,
      exitCode: 137,
      logs: [{type: 'stdout', log: 'listening on 8080\n', timestamp: '2023-11-14T22:13:21.000Z'}],
      diagnostics: {
        reason: {
          hostShutDown: false,
          jobStopped: false,
          jobExpired: true,
          reason: 'Operation stopped due to flow expired',
        },
      },
    },
    {
      providerId: 'container',
      operationId: 'after',
      group: 'after',
      status: 'success',
      startTime: null,
      endTime: 1_700_000_600_000,
      exitCode: 0,
      logs: [],
      diagnostics: {reason: {hostShutDown: false, jobStopped: false, jobExpired: false}},
    },
  ],
}

/** The network's pre-2025 format: results[op] = [status, steps], each step's log [[fd, text], ...]. */
const PRE_2025 = {
  nosana: {run: 'x'},
  results: {
    hello: [
      'success',
      [
        {
          cmd: 'echo hi',
          log: [
            [1, 'hi from 2024\n'],
            [2, 'a warning\n'],
          ],
          exitCode: 0,
        },
      ],
    ],
  },
}

/** gpunet's own earlier result, still stored on existing localnets. */
const GPUNET_1 = {
  job: 'x',
  node: 'y',
  status: 'success',
  isolated: true,
  notices: [],
  ops: [
    {
      id: 'old',
      exitCode: 0,
      startedAt: '2025-01-01T00:00:00.000Z',
      endedAt: '2025-01-01T00:00:01.000Z',
      stdout: 'line one\nline two\n',
      stderr: '',
      stdoutCutBytes: 0,
      stderrCutBytes: 0,
      stopped: false,
    },
  ],
}

interface Report {
  status: string
  outcome: string | null
  failure: {code: string; op?: string; exitCode?: number} | null
  timedOut: boolean
  result: string | null
  resultView: {
    format: string
    ops: {
      id: string
      status: string
      exitCode: number | null
      logs: {stream: string | null; time: string | null; line: string}[]
    }[]
  } | null
  resultContent: unknown
  files?: string[]
}

describe('gpunet job get: results in every format (stand-in devnet)', function () {
  this.timeout(60_000)
  const box: CliSandbox = useCliSandbox()
  let rpc: StandinRpc
  let pinning: StandinPinning
  let env: NodeJS.ProcessEnv
  const wallet = Keypair.generate()

  beforeEach(async () => {
    rpc = await startStandinRpc()
    pinning = await startStandinPinning('jwt')
    seedNetwork(rpc, 'devnet', wallet.publicKey)
    env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url}
  })
  afterEach(async () => {
    await rpc.close()
    await pinning.close()
  })

  /** A COMPLETED job whose result (when given) the gateway serves. */
  async function doneJob(result: unknown): Promise<PublicKey> {
    const definitionCid = await ipfsCid(DEFINITION)
    pinning.content.set(definitionCid, DEFINITION)
    let ipfsResult: Uint8Array | undefined
    if (result !== undefined) {
      const bytes = new TextEncoder().encode(JSON.stringify(result))
      const cid = await ipfsCid(bytes)
      pinning.content.set(cid, bytes)
      ipfsResult = cidDigest(cid)
    }
    const job = Keypair.generate().publicKey
    putJobAccount(rpc, 'devnet', job, {
      ipfsJob: cidDigest(definitionCid),
      timeout: 600n,
      state: 2,
      ipfsResult,
      payer: wallet.publicKey,
    })
    return job
  }
  const get = (job: PublicKey, ...rest: string[]) =>
    runCli(['job', 'get', job.toBase58(), '--network', 'devnet', '--rpc', rpc.url, ...rest], {env})
  const json = async (job: PublicKey, ...rest: string[]): Promise<Report> => {
    const result = await get(job, '--json', ...rest)
    assert.equal(result.code, 0, result.stderr + result.stdout)
    return JSON.parse(result.stdout) as Report
  }

  it('shows a flow state: outcome, each operation, its lines with stream and time, and the raw document', async () => {
    const job = await doneJob(FLOW_STATE)
    const report = await json(job)
    assert.equal(report.outcome, 'failed')
    assert.deepEqual(report.failure, {
      code: 'operation_failed',
      message: 'Operation ../escape/train exited with code 3.',
      op: '../escape/train',
      exitCode: 3,
    })
    assert.equal(report.resultView?.format, 'flow-state')
    assert.deepEqual(report.resultView?.ops[0]?.logs, [
      {stream: 'stdout', time: '2023-11-14T22:13:21.000Z', line: 'downloading weights'},
      {stream: 'stderr', time: '2023-11-14T22:13:22.000Z', line: 'warning: slow disk'},
    ])
    assert.deepEqual(report.resultContent, FLOW_STATE)
    const human = await get(job)
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, /^ {2}Outcome +failed: Operation \.\.\/escape\/train exited with code 3\. \[\w+\]$/m)
    assert.match(
      human.stdout,
      /^Operation prepare \(success, exit code 0\)\n {2}downloading weights\n {2}\[stderr\] warning: slow disk$/m,
    )
    assert.match(human.stdout, /^Operation \.\.\/escape\/train \(failed, exit code 3\)\n {2}epoch 1$/m)
  })

  it("reads the network's result of a job its node stopped at its timeout as succeeded, and says so (--wait: 0)", async () => {
    const job = await doneJob(EXPIRED_FLOW_STATE)
    const report = await json(job)
    assert.deepEqual([report.outcome, report.failure, report.timedOut], ['succeeded', null, true])
    assert.equal(report.resultView?.ops[0]?.status, 'success', "the operation keeps the network's status")
    const human = await get(job)
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, /^ {2}Outcome +succeeded \(it ran until its timeout\)$/m)
    const waited = await get(job, '--wait', '--wait-timeout', '10')
    assert.equal(waited.code, 0, waited.stderr)
    assert.match(waited.stdout, /^ {2}Outcome +succeeded \(it ran until its timeout\)$/m)
    // A job that succeeded without reaching its timeout says nothing of it.
    const plain = await json(await doneJob({...EXPIRED_FLOW_STATE, opStates: [EXPIRED_FLOW_STATE.opStates[1]!]}))
    assert.deepEqual([plain.outcome, plain.timedOut], ['succeeded', false])
  })

  it("shows the network's pre-2025 format and gpunet's own earlier one the same way", async () => {
    const old = await json(await doneJob(PRE_2025))
    assert.equal(old.resultView?.format, 'pre-2025')
    assert.equal(old.outcome, 'succeeded')
    assert.deepEqual(old.resultView?.ops[0]?.logs, [
      {stream: 'stdout', time: null, line: 'hi from 2024'},
      {stream: 'stderr', time: null, line: 'a warning'},
    ])
    assert.equal(old.resultView?.ops[0]?.exitCode, 0)
    const mine = await json(await doneJob(GPUNET_1))
    assert.equal(mine.resultView?.format, 'gpunet-1')
    assert.equal(mine.outcome, 'succeeded')
    assert.deepEqual(
      mine.resultView?.ops[0]?.logs.map((l) => l.line),
      ['line one', 'line two'],
    )
  })

  it('says a done job without a result was stopped before it finished, and --out then writes nothing (exit 7)', async () => {
    const job = await doneJob(undefined)
    const human = await get(job)
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, /^ {2}Outcome +stopped before it finished \(no result recorded\)$/m)
    const out = join(box.dir, 'none')
    const refused = await get(job, '--out', out)
    assert.equal(refused.code, 7)
    assert.match(refused.stderr, /has no result yet: nothing to write/)
    assert.equal(existsSync(out), false)
  })

  it('--out writes result.json and each operation’s streams and results, never outside DIR, and keeps files without --force', async () => {
    const job = await doneJob(FLOW_STATE)
    const out = join(box.dir, 'out')
    const report = await json(job, '--out', out)
    assert.deepEqual(
      readdirSync(out).sort(),
      [
        '__escape_train.stdout.log',
        'manifest.json',
        'prepare.results.json',
        'prepare.stderr.log',
        'prepare.stdout.log',
        'result.json',
      ].sort(),
    )
    assert.equal(report.files?.length, 6)
    // The bytes as stored, not the document printed again.
    assert.equal(readFileSync(join(out, 'result.json'), 'utf8'), JSON.stringify(FLOW_STATE))
    assert.equal(readFileSync(join(out, 'prepare.stdout.log'), 'utf8'), 'downloading weights\n')
    assert.deepEqual(JSON.parse(readFileSync(join(out, 'prepare.results.json'), 'utf8')), {checksum: 'abc123'})
    assert.equal(existsSync(join(box.dir, 'escape')), false, 'nothing outside DIR')

    writeFileSync(join(out, 'prepare.stdout.log'), 'mine')
    const again = await get(job, '--out', out)
    assert.equal(again.code, 2)
    assert.match(again.stderr, /already holds .*prepare\.stdout\.log/)
    assert.equal(readFileSync(join(out, 'prepare.stdout.log'), 'utf8'), 'mine')
    const forced = await get(job, '--out', out, '--force')
    assert.equal(forced.code, 0, forced.stderr)
    assert.equal(readFileSync(join(out, 'prepare.stdout.log'), 'utf8'), 'downloading weights\n')
  })
})
