/**
 * The network's official SDK (@nosana/sdk 0.4.69) against a gpunet localnet, configured only with the addresses
 * `localnet status --json` prints (issue 21): it lists, reads, ends and delists jobs that gpunet's node runs.
 */
import {strict as assert} from 'node:assert'

import {Client, type JobDefinition} from '@nosana/sdk'
import {getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {Keypair, PublicKey, SystemProgram, SYSVAR_RENT_PUBKEY} from '@solana/web3.js'

import {findVaultAddress, jobsInstruction} from '../../src/lib/market/index.js'
import {readKeypair} from '../../src/lib/keys/wallet.js'
import {type CliSandbox, cliSandbox, type SandboxChain, sandboxChain} from '../helpers/cli-localnet.js'
import {sendInstructions} from '../helpers/market.js'
import {requirePodman, TEST_IMAGE} from '../helpers/podman.js'
import {eventually} from '../helpers/eventually.js'
import {restoreSdkPresets} from '../helpers/sdk-presets.js'

interface Status {
  rpcUrl: string
  contentStoreUrl: string
  programId: string
  mint: string
  market: string
}

const definition = (cmd: string[]): JobDefinition => ({
  version: '0.1',
  type: 'container',
  meta: {trigger: 'cli'},
  ops: [{type: 'container/run', id: 'hello', args: {image: TEST_IMAGE, cmd}}],
})

/** `jobs.list` without `instructionOnly` sends the transaction and answers its addresses. */
async function list(sdk: Client, ...args: Parameters<Client['jobs']['list']>): Promise<{job: string}> {
  return (await sdk.jobs.list(...args)) as {job: string}
}

describe('@nosana/sdk against a gpunet localnet', function () {
  this.timeout(120_000)
  requirePodman()
  let box: CliSandbox
  let chain: SandboxChain
  let status: Status
  let sdk: Client

  before(async function () {
    this.timeout(120_000)
    box = cliSandbox()
    Object.assign(box.env, {GPUNET_NODE_PULL: 'never'})
    const started = await box.run(['localnet', 'start', '--detach', '--json'])
    assert.equal(started.code, 0, started.stderr)
    status = JSON.parse(started.stdout) as Status
    chain = await sandboxChain(box)
    const wallet = readKeypair(box.env.GPUNET_WALLET!)
    restoreSdkPresets()
    sdk = new Client('devnet', wallet, {
      solana: {
        network: status.rpcUrl,
        jobs_address: status.programId,
        nos_address: status.mint,
        market_address: status.market,
      },
      ipfs: {api: status.contentStoreUrl, gateway: `${status.contentStoreUrl}/ipfs/`, jwt: 'any-token'},
    })
  })
  after(() => box?.cleanup())

  it('lists a job that gpunet’s node runs, then reads it, its result and (while it runs) its run', async () => {
    const posted = await list(sdk, definition(['sh', '-c', 'sleep 1; echo hello from the sdk']), 300, status.market)
    const job = new PublicKey(posted.job)
    const running = await eventually('the run', 30_000, async () => {
      const runs = await sdk.jobs.getRuns([{memcmp: {offset: 8, bytes: job.toBase58()}}])
      return runs.length > 0 ? runs[0] : undefined
    })
    const run = await sdk.jobs.getRun(running.publicKey)
    assert.equal(run.account.job.toBase58(), job.toBase58())
    const done = await eventually('the result', 60_000, async () => {
      const read = await sdk.jobs.get(job)
      return read.state === 'COMPLETED' ? read : undefined
    })
    const definitionBack = (await sdk.ipfs.retrieve(done.ipfsJob!)) as {ops: {args: {cmd: string[]}}[]}
    assert.deepEqual(definitionBack.ops[0]!.args.cmd, ['sh', '-c', 'sleep 1; echo hello from the sdk'])
    const result = (await sdk.ipfs.retrieve(done.ipfsResult!)) as unknown
    assert.equal(typeof result, 'object', 'the result comes back parsed, as JSON')
    assert.match(JSON.stringify(result), /hello from the sdk/)
  })

  it('ends a running job, and the node is paid', async () => {
    const posted = await list(sdk, definition(['sh', '-c', 'sleep 60']), 300, status.market)
    const job = new PublicKey(posted.job)
    const [run] = await eventually('the run', 30_000, async () => {
      const runs = await sdk.jobs.getRuns([{memcmp: {offset: 8, bytes: job.toBase58()}}])
      return runs.length > 0 ? runs : undefined
    })
    const nodeTokens = getAssociatedTokenAddressSync(chain.mint, run!.account.node as PublicKey, true)
    const earned = async () => BigInt((await chain.connection.getTokenAccountBalance(nodeTokens)).value.amount)
    const before = await earned()
    // Fixed: the node is paid for whole seconds run, so one must pass.
    await new Promise((resolve) => setTimeout(resolve, 1200))
    await sdk.jobs.end(job)
    const ended = await sdk.jobs.get(job)
    assert.equal(ended.state, 'COMPLETED')
    assert.ok(ended.timeEnd > 0)
    assert.ok((await earned()) > before, 'the node is paid for the time it ran')
  })

  it('delists a queued job on a market without nodes, and the deposit comes back', async () => {
    const authority = Keypair.generate()
    assert.equal((await box.run(['localnet', 'fund', authority.publicKey.toBase58(), '--sol', '1'])).code, 0)
    const market = Keypair.generate()
    const open = jobsInstruction(
      chain.programId,
      'open',
      {
        mint: chain.mint,
        market: market.publicKey,
        vault: findVaultAddress(chain.programId, market.publicKey, chain.mint)[0],
        authority: authority.publicKey,
        accessKey: SystemProgram.programId,
        rent: SYSVAR_RENT_PUBKEY,
        systemProgram: SystemProgram.programId,
        tokenProgram: TOKEN_PROGRAM_ID,
      },
      {jobExpiration: 86_400n, jobPrice: 10n, jobTimeout: 600n, jobType: 0, nodeXnosMinimum: 0n},
    )
    assert.equal((await sendInstructions(chain, [open], [authority, market])).error, undefined)
    const before = await chain.connection.getTokenAccountBalance(
      (await chain.connection.getTokenAccountsByOwner(chain.wallet.publicKey, {mint: chain.mint})).value[0]!.pubkey,
    )
    const posted = await list(sdk, definition(['true']), 300, market.publicKey)
    const job = new PublicKey(posted.job)
    assert.equal((await sdk.jobs.get(job)).state, 'QUEUED')
    await sdk.jobs.delist(job)
    assert.equal(await chain.connection.getAccountInfo(job), null, 'a delisted job is closed')
    const after = await chain.connection.getTokenAccountBalance(
      (await chain.connection.getTokenAccountsByOwner(chain.wallet.publicKey, {mint: chain.mint})).value[0]!.pubkey,
    )
    assert.equal(after.value.amount, before.value.amount)
  })
})
