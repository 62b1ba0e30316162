/**
 * The posting workflow's decisions before anything is paid, through the library's postJob (a stand-in devnet RPC,
 * pinning service and secrets service on 127.0.0.1) and runnableWarnings: before issue 51 only `job post` made them.
 */
import {strict as assert} from 'node:assert'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'

import {isGpunetError} from '../../../src/lib/errors.js'
import {connectNetwork, type GpunetNetwork, postJob, type PostSpend} from '../../../src/lib/job/api.js'
import {runnableWarnings} from '../../../src/lib/job/posting.js'
import type {JobDefinition} from '../../../src/lib/definition/schema.js'
import {SecretsClient} from '../../../src/lib/secrets/client.js'
import {oneOpDefinition} from '../../helpers/definitions.js'
import {newWallet, sqliteAdapter, startService, tempDir} from '../../helpers/secrets.js'
import {seedNetwork} from '../../helpers/standin-network.js'
import {startStandinPinning, startStandinRpc} from '../../helpers/standin.js'

/** A container job whose environment refers to the secrets `names`. */
const referring = (names: string[]) =>
  oneOpDefinition({env: Object.fromEntries(names.map((n) => [`V_${n}`, `%%secrets.${n}%%`]))})

describe('postJob: the checks before paying', function () {
  this.timeout(30_000)
  let rpc: Awaited<ReturnType<typeof startStandinRpc>>
  let pinning: Awaited<ReturnType<typeof startStandinPinning>>
  let service: Awaited<ReturnType<typeof startService>>
  let dir: {dir: string; remove: () => Promise<void>}
  let net: GpunetNetwork
  const wallet = newWallet()

  before(async () => {
    rpc = await startStandinRpc()
    pinning = await startStandinPinning('jwt')
    service = await startService(sqliteAdapter)
    dir = await tempDir()
    seedNetwork(rpc, 'devnet', wallet.publicKey)
    await new SecretsClient({url: service.url, wallet, cache: null}).set({STORED: 'value'})
    // The wallet is given as bytes: the secrets looked up must be that wallet's, not the settings' one.
    net = await connectNetwork({
      network: 'devnet',
      rpcUrl: rpc.url,
      wallet: wallet.bytes,
      env: {
        GPUNET_SECRETS_URL: service.url,
        GPUNET_PINATA_JWT: 'jwt',
        GPUNET_PINNING_SERVICE_URL: pinning.url,
        GPUNET_IPFS_GATEWAY: pinning.url,
        XDG_CONFIG_HOME: join(dir.dir, 'config'),
      },
    })
  })
  after(async () => {
    await net.close()
    await rpc.close()
    await pinning.close()
    await service.stop()
    await dir.remove()
  })
  beforeEach(() => {
    rpc.sent.length = 0
    pinning.content.clear()
  })

  it('refuses a job that refers to a secret not stored (exit 3), with nothing uploaded or sent', async () => {
    await assert.rejects(postJob(net, referring(['STORED', 'MISSING'])), (error: unknown) => {
      assert.ok(isGpunetError(error))
      assert.equal(error.code, 'secret_missing')
      assert.equal(error.exitCode, 3)
      assert.deepEqual(error.fields, {missing: ['MISSING']})
      return true
    })
    assert.equal(rpc.sent.length, 0)
    assert.equal(pinning.content.size, 0)
  })

  it('posts it once with secretsCheck: false, and a job whose secrets are stored without it', async () => {
    const unchecked = await postJob(net, referring(['MISSING']), {secretsCheck: false, timeout: 600})
    assert.deepEqual(unchecked.warnings, [])
    const checked = await postJob(net, referring(['STORED']), {timeout: 600})
    assert.notEqual(checked.job, unchecked.job)
    assert.equal(rpc.sent.length, 2)
  })

  it('asks confirm with the quote once every check passed; false cancels (exit 130), nothing uploaded or sent', async () => {
    const asked: PostSpend[] = []
    await assert.rejects(
      postJob(net, referring([]), {timeout: 600, confirm: (spend) => (asked.push(spend), false)}),
      (error: unknown) => isGpunetError(error) && error.code === 'cancelled' && error.exitCode === 130,
    )
    assert.equal(asked.length, 1)
    assert.equal(asked[0]!.network, 'devnet')
    assert.equal(asked[0]!.totalPrice?.baseUnits, '6000')
    assert.match(asked[0]!.question, /^Post this job on devnet for .* \(600 s\)\?$/)
    assert.equal(rpc.sent.length, 0)
    assert.equal(pinning.content.size, 0)
    // A secret missing is refused before the question.
    await assert.rejects(postJob(net, referring(['MISSING']), {confirm: (spend) => (asked.push(spend), true)}))
    assert.equal(asked.length, 1)
    await postJob(net, referring([]), {timeout: 600, confirm: async () => true})
    assert.equal(rpc.sent.length, 1)
  })
})

describe('runnableWarnings: a job no localnet node would run', () => {
  const market = Keypair.generate().publicKey
  const job = referring([]) as unknown as JobDefinition
  const noNode = {localnetNode: null, defaultMarket: market}

  it('is refused on the localnet (exit 5, the fix and --queue-anyway in the hint)', () => {
    assert.throws(
      () => runnableWarnings(noNode, market, job, {note: () => assert.fail('nothing noted')}),
      (error: unknown) =>
        isGpunetError(error) && error.code === 'no_node' && error.exitCode === 5 && /--queue-anyway/.test(error.hint!),
    )
  })

  it('is posted with queueAnyway, with the reason noted and answered as a warning', () => {
    const notes: string[] = []
    const warnings = runnableWarnings(noNode, market, job, {queueAnyway: true, note: (line) => notes.push(line)})
    assert.deepEqual(warnings, ['no localnet node would run this job: the localnet was started with --no-node'])
    assert.deepEqual(notes, [`Warning: ${warnings[0]} (--queue-anyway)`])
  })

  it('is judged alike on every market the localnet opened, and refused on one that has no node', () => {
    const other = Keypair.generate().publicKey
    const noGpu = {address: 'N', gpus: 0, runtime: 'podman' as const, runtimeChoice: 'auto' as const, runningJobs: []}
    const localnetMarkets = [
      {address: market.toBase58(), slug: 'localnet', nodes: 1},
      {address: other.toBase58(), slug: 'rtx-4090', nodes: 1},
    ]
    const gpuJob = {
      version: '0.1',
      type: 'container',
      ops: [{id: 'a', type: 'container/run', args: {image: 'x', gpu: true}}],
    }
    const net = {localnetNode: noGpu, defaultMarket: market, localnetMarkets}
    const refused = (error: unknown) => isGpunetError(error) && error.code === 'no_gpu_node' && error.exitCode === 5
    assert.throws(() => runnableWarnings(net, other, gpuJob as JobDefinition, {note: () => {}}), refused)
    assert.throws(
      () => runnableWarnings({...net, localnetNode: {off: 'no podman'}}, other, job, {note: () => {}}),
      (error: unknown) => isGpunetError(error) && error.code === 'node_off',
    )
    const empty = {...net, localnetMarkets: [localnetMarkets[0]!, {...localnetMarkets[1]!, nodes: 0}]}
    assert.throws(
      () => runnableWarnings(empty, other, job, {note: () => {}}),
      (error: unknown) => isGpunetError(error) && error.code === 'no_node' && /market rtx-4090/.test(error.message),
    )
  })

  it('is not judged on another market, off the localnet, or without a definition the node could read', () => {
    const note = () => assert.fail('nothing noted')
    assert.deepEqual(runnableWarnings(noNode, Keypair.generate().publicKey, job, {note}), [])
    assert.deepEqual(runnableWarnings({localnetNode: undefined, defaultMarket: market}, market, job, {note}), [])
    assert.deepEqual(runnableWarnings(noNode, market, null, {note}), [])
  })
})
