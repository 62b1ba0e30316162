/**
 * What a gateway answers cannot crash or fool the client (issue 43): a stand-in devnet RPC and gateway on 127.0.0.1
 * that serve other bytes than a CID's, more bytes than the limit, a result nested 20,000 deep and operation ids made
 * of escape sequences. CIDs are computed with ipfs-unixfs-importer, not with gpunet's code.
 */
import {strict as assert} from 'node:assert'
import {existsSync, readFileSync} from 'node:fs'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'

import {Keypair, type PublicKey} from '@solana/web3.js'

import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, useCliSandbox} from '../../helpers/cli-localnet.js'
import {putJobAccount, seedNetwork} from '../../helpers/standin-network.js'
import {
  cidDigest,
  ipfsCid,
  startStandinPinning,
  startStandinRpc,
  type StandinPinning,
  type StandinRpc,
} from '../../helpers/standin.js'
import {describeAtTerminal, hasControls, runInTerminal} from '../../helpers/terminal.js'

const DEFINITION = new TextEncoder().encode('{"version":"0.1","type":"container","ops":[]}')

/** A flow state of one operation `id` with these stdout lines. */
function flowState(id: string, lines: string[]): object {
  return {
    status: 'success',
    startTime: 1_700_000_000_000,
    endTime: 1_700_000_060_000,
    opStates: [
      {
        providerId: 'container',
        operationId: id,
        group: 'g',
        status: 'success',
        startTime: 1_700_000_000_000,
        endTime: 1_700_000_060_000,
        exitCode: 0,
        logs: lines.map((log) => ({type: 'stdout', log: `${log}\n`, timestamp: '2023-11-14T22:13:21.000Z'})),
        diagnostics: {reason: {hostShutDown: false, jobStopped: false, jobExpired: false}},
      },
    ],
  }
}

interface Failure {
  error: {code: string; message: string; exitCode: number}
}

describe('job get against a hostile gateway (stand-in devnet)', function () {
  this.timeout(60_000)
  const box: CliSandbox = useCliSandbox()
  let rpc: StandinRpc
  let pinning: StandinPinning
  const wallet = Keypair.generate()

  beforeEach(async () => {
    rpc = await startStandinRpc()
    pinning = await startStandinPinning('jwt')
    seedNetwork(rpc, 'devnet', wallet.publicKey)
  })
  afterEach(async () => {
    await rpc.close()
    await pinning.close()
  })

  /** A COMPLETED job whose definition and result the gateway serves; `served` replaces the result's bytes. */
  async function doneJob(result: Uint8Array, served: Uint8Array = result, definition = DEFINITION): Promise<PublicKey> {
    const definitionCid = await ipfsCid(DEFINITION)
    pinning.content.set(definitionCid, definition)
    const resultCid = await ipfsCid(result)
    pinning.content.set(resultCid, served)
    const job = Keypair.generate().publicKey
    putJobAccount(rpc, 'devnet', job, {
      ipfsJob: cidDigest(definitionCid),
      timeout: 600n,
      state: 2,
      ipfsResult: cidDigest(resultCid),
      payer: wallet.publicKey,
    })
    return job
  }
  const get = (job: PublicKey, env: NodeJS.ProcessEnv, ...rest: string[]) =>
    runCli(['job', 'get', job.toBase58(), '--network', 'devnet', '--rpc', rpc.url, ...rest], {env})
  const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))

  it('refuses a result whose bytes are not its CID, naming the gateway (exit 5); --out writes nothing', async () => {
    const truth = encode(flowState('train', ['loss 0.1']))
    const lie = encode(flowState('train', ['loss 0.0001, all good']))
    const job = await doneJob(truth, lie)
    const env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url}
    const out = await get(job, env, '--json')
    assert.equal(out.code, 5, out.stderr)
    const failure = JSON.parse(out.stdout) as Failure
    assert.equal(failure.error.code, 'content_mismatch')
    assert.match(failure.error.message, new RegExp(`the gateway ${pinning.url}/? answered other content for Qm`))
    const dir = join(box.dir, 'out')
    const written = await get(job, env, '--out', dir)
    assert.equal(written.code, 5)
    assert.equal(existsSync(dir), false)
  })

  it('refuses a definition whose bytes are not its CID (exit 5)', async () => {
    const result = encode(flowState('train', ['ok']))
    const job = await doneJob(
      result,
      result,
      new TextEncoder().encode('{"version":"0.1","type":"container","ops":[{}]}'),
    )
    const out = await get(job, {...box.env, GPUNET_IPFS_GATEWAY: pinning.url}, '--json')
    assert.equal(out.code, 5, out.stderr)
    assert.equal((JSON.parse(out.stdout) as Failure).error.code, 'content_mismatch')
  })

  it('stops reading a result past GPUNET_MAX_CONTENT_BYTES (exit 3); a bad setting is exit 2', async () => {
    const big = encode(
      flowState(
        'train',
        Array.from({length: 20_000}, (_, i) => `line ${i}`),
      ),
    )
    const job = await doneJob(big)
    const env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url}
    const capped = await get(job, {...env, GPUNET_MAX_CONTENT_BYTES: '65536'}, '--json')
    assert.equal(capped.code, 3, capped.stderr)
    const failure = JSON.parse(capped.stdout) as Failure
    assert.equal(failure.error.code, 'content_too_large')
    assert.match(failure.error.message, /larger than 65536 bytes/)
    const bad = await get(job, {...env, GPUNET_MAX_CONTENT_BYTES: '12k'}, '--json')
    assert.equal(bad.code, 2, bad.stderr)
    const fine = await get(job, env, '--json')
    assert.equal(fine.code, 0, fine.stderr)
  })

  it('reads at most 64 MiB by default from a gateway that never stops sending', async () => {
    const result = encode(flowState('train', ['ok']))
    const job = await doneJob(result)
    let sent = 0
    let closedEarly = false
    const endless = createServer((req, res) => {
      // The definition is served as stored; the result never ends.
      const found = pinning.content.get((/^\/ipfs\/(\w+)$/.exec(req.url ?? '') ?? [])[1] ?? '')
      if (found && found.length === DEFINITION.length) return res.end(found)
      res.writeHead(200, {'content-type': 'application/octet-stream'})
      const chunk = Buffer.alloc(1024 * 1024, 0x20)
      const pump = () => {
        while (sent < 512 * 1024 * 1024) {
          sent += chunk.length
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
        res.end()
      }
      res.on('close', () => (closedEarly = !res.writableFinished))
      pump()
    })
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}`
      const out = await get(job, {...box.env, GPUNET_IPFS_GATEWAY: url}, '--json')
      assert.equal(out.code, 3, out.stderr)
      assert.match((JSON.parse(out.stdout) as Failure).error.message, /larger than 67108864 bytes/)
      assert.ok(closedEarly, 'the client closed the connection')
      assert.ok(sent < 200 * 1024 * 1024, `the client read on to ${sent} bytes`)
    } finally {
      endless.closeAllConnections()
      await new Promise((resolve) => endless.close(resolve))
    }
  })

  it('a result nested 20,000 deep is kept as text: job get --json and --out do not crash, the bytes exact', async () => {
    const deep = new TextEncoder().encode(`{"status":"success","opStates":${'['.repeat(20_000)}${']'.repeat(20_000)}}`)
    const job = await doneJob(deep)
    const env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url}
    const out = await get(job, env, '--json')
    assert.equal(out.code, 0, out.stderr)
    const report = JSON.parse(out.stdout) as {resultContent: unknown; resultView: unknown}
    assert.equal(report.resultContent, new TextDecoder().decode(deep))
    assert.equal(report.resultView, null)
    const dir = join(box.dir, 'deep')
    const written = await get(job, env, '--out', dir)
    assert.equal(written.code, 0, written.stderr)
    assert.deepEqual(readFileSync(join(dir, 'result.json')), Buffer.from(deep))
  })
})

describeAtTerminal('job get at a terminal: escape sequences in a result are stripped, --out keeps them', function () {
  this.timeout(60_000)
  const box: CliSandbox = useCliSandbox()
  let rpc: StandinRpc
  let pinning: StandinPinning

  beforeEach(async () => {
    rpc = await startStandinRpc()
    pinning = await startStandinPinning('jwt')
  })
  afterEach(async () => {
    await rpc.close()
    await pinning.close()
  })

  it('strips them from result lines and operation ids when printed, keeps them in result.json and the manifest', async () => {
    const wallet = Keypair.generate()
    seedNetwork(rpc, 'devnet', wallet.publicKey)
    const opId = 'train\x1b]0;owned\x07\x1b[2K'
    const result = new TextEncoder().encode(
      JSON.stringify(flowState(opId, ['\x1b]52;c;cm0gLXJmIH4=\x07copied', '\x1b[32m✔ tests passed\x1b[0m\x9b1A'])),
    )
    const definitionCid = await ipfsCid(DEFINITION)
    pinning.content.set(definitionCid, DEFINITION)
    const resultCid = await ipfsCid(result)
    pinning.content.set(resultCid, result)
    const job = Keypair.generate().publicKey
    putJobAccount(rpc, 'devnet', job, {
      ipfsJob: cidDigest(definitionCid),
      timeout: 600n,
      state: 2,
      ipfsResult: cidDigest(resultCid),
      payer: wallet.publicKey,
    })
    const dir = join(box.dir, 'out')
    const env = {...box.env, GPUNET_IPFS_GATEWAY: pinning.url}
    const out = await runInTerminal(
      ['job', 'get', job.toBase58(), '--network', 'devnet', '--rpc', rpc.url, '--out', dir],
      env,
    )
    assert.equal(out.code, 0, out.output)
    assert.match(out.output, /Operation train \(/)
    assert.match(out.output, /copied/)
    assert.match(out.output, /✔ tests passed/)
    assert.equal(hasControls(out.output), false, JSON.stringify(out.output))
    assert.deepEqual(readFileSync(join(dir, 'result.json')), Buffer.from(result))
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {operations: {id: string}[]}
    assert.equal(manifest.operations[0]!.id, opId)
  })
})
