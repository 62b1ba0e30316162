/**
 * The network's official kit (@nosana/kit 2.1.8, on @solana/kit) against a gpunet localnet, configured only with
 * the addresses `localnet status --json` prints (issue 21): it posts through its own send-and-confirm (which
 * confirms over the WebSocket), reads, extends and ends, and reads back what the SDK pinned, typed.
 */
import {strict as assert} from 'node:assert'

import {createNosanaClient, getNosanaConfig, NosanaNetwork} from '@nosana/kit'
import {Client} from '@nosana/sdk'
import {address, createKeyPairSignerFromBytes} from '@solana/kit'

import {readKeypair} from '../../src/lib/keys/wallet.js'
import {type CliSandbox, cliSandbox} from '../helpers/cli-localnet.js'
import {requirePodman, TEST_IMAGE} from '../helpers/podman.js'
import {eventually} from '../helpers/eventually.js'
import {restoreSdkPresets} from '../helpers/sdk-presets.js'

interface Status {
  rpcUrl: string
  wsUrl: string
  contentStoreUrl: string
  programId: string
  mint: string
  market: string
}

describe('@nosana/kit against a gpunet localnet', function () {
  this.timeout(120_000)
  requirePodman()
  let box: CliSandbox
  let status: Status
  let kit: ReturnType<typeof createNosanaClient>
  let sdk: Client

  before(async function () {
    this.timeout(120_000)
    box = cliSandbox()
    Object.assign(box.env, {GPUNET_NODE_PULL: 'never'})
    const started = await box.run(['localnet', 'start', '--detach', '--json'])
    assert.equal(started.code, 0, started.stderr)
    status = JSON.parse(started.stdout) as Status
    const keypair = readKeypair(box.env.GPUNET_WALLET!)
    const ipfs = {api: status.contentStoreUrl, gateway: `${status.contentStoreUrl}/ipfs/`, jwt: 'any-token'}
    kit = createNosanaClient(NosanaNetwork.MAINNET, {
      solana: {rpcEndpoint: status.rpcUrl, wsEndpoint: status.wsUrl, commitment: 'confirmed'},
      wallet: await createKeyPairSignerFromBytes(keypair.secretKey),
      ipfs,
      // The kit's types leave `programs` out of a partial config, but it merges it: the localnet's own token.
      programs: {
        ...getNosanaConfig(NosanaNetwork.MAINNET).programs,
        jobsAddress: address(status.programId),
        nosTokenAddress: address(status.mint),
      },
    } as Parameters<typeof createNosanaClient>[1])
    restoreSdkPresets()
    sdk = new Client('devnet', keypair, {
      solana: {network: status.rpcUrl, jobs_address: status.programId, nos_address: status.mint},
      ipfs,
    })
  })
  after(() => box?.cleanup())

  it('posts with its own send-and-confirm, reads the job, extends it and ends it', async () => {
    const ipfsHash = await sdk.ipfs.pin({
      version: '0.1',
      type: 'container',
      meta: {trigger: 'cli'},
      ops: [{type: 'container/run', id: 'wait', args: {image: TEST_IMAGE, cmd: ['sh', '-c', 'sleep 60']}}],
    })
    const list = await kit.jobs.list({market: address(status.market), timeout: 300, ipfsHash})
    const job = list.accounts[0].address
    await kit.solana.buildSignAndSend(list)
    const posted = await kit.jobs.get(job)
    assert.equal(posted.ipfsJob, ipfsHash)
    assert.equal(Number(posted.timeout), 300)

    // The kit's `extend` adds its timeout to the job's.
    await kit.solana.buildSignAndSend(await kit.jobs.extend({job, timeout: 600}))
    assert.equal(Number((await kit.jobs.get(job)).timeout), 900)

    await eventually('RUNNING', 30_000, async () => ((await kit.jobs.get(job)).state === 1 ? true : undefined))
    await new Promise((resolve) => setTimeout(resolve, 1200))
    await kit.solana.buildSignAndSend(await kit.jobs.end({job}))
    const ended = await kit.jobs.get(job)
    assert.equal(ended.state, 2, 'ended: COMPLETED')
    assert.ok(Number(ended.timeEnd) > 0)
  })

  it('retrieves, typed, the definition the SDK pinned and the result gpunet’s node wrote', async () => {
    const document = {
      version: '0.1',
      type: 'container',
      meta: {trigger: 'cli'},
      ops: [{type: 'container/run', id: 'hello', args: {image: TEST_IMAGE, cmd: ['echo', 'hello from the kit']}}],
    }
    const ipfsHash = await sdk.ipfs.pin(document)
    assert.deepEqual(await kit.ipfs.retrieve<typeof document>(ipfsHash), document)
    const list = await kit.jobs.list({market: address(status.market), timeout: 300, ipfsHash})
    const job = list.accounts[0].address
    await kit.solana.buildSignAndSend(list)
    let last: unknown
    const done = await eventually('COMPLETED', 60_000, async () => {
      const read = await kit.jobs.get(job)
      last = read
      return read.state === 2 && read.ipfsResult ? read : undefined
    }).catch((error: Error) => {
      throw new Error(
        `${error.message}: ${JSON.stringify(last, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`,
      )
    })
    const result = await kit.ipfs.retrieve<Record<string, unknown>>(done.ipfsResult!)
    assert.equal(typeof result, 'object', 'parsed, as the gateway types it JSON')
    assert.match(JSON.stringify(result), /hello from the kit/)
  })
})
