import {strict as assert} from 'node:assert'
import {existsSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {getAssociatedTokenAddressSync} from '@solana/spl-token'
import {Keypair, PublicKey} from '@solana/web3.js'

import {computeCidV0} from '../../../src/lib/ipfs/cid.js'
import {decodeJobAccount, ipfsHashToBytes, JobState} from '../../../src/lib/market/index.js'
import {runCli} from '../../helpers/cli.js'
import {
  type CliSandbox,
  cliSandbox,
  type SandboxChain,
  sandboxChain,
  useCliSandbox,
} from '../../helpers/cli-localnet.js'

/** A definition exposing a port, with the editor hint `job post` strips before upload. */
const DEFINITION = {
  $schema: 'https://gpunet.dev/job-definition.schema.json',
  version: '0.1',
  type: 'container',
  ops: [{id: 'serve', type: 'container/run', args: {image: 'docker.io/library/nginx:1.27', expose: 8080}}],
}

/** The bytes `job post` uploads: the definition without `$schema`, as indented JSON. */
function uploaded(definition: Record<string, unknown>): Uint8Array {
  const rest = {...definition}
  delete rest.$schema
  return new TextEncoder().encode(`${JSON.stringify(rest, null, 2)}\n`)
}

interface PostJson {
  network: string
  job: string
  status: string
  market: string
  definition: string
  pricePerSecond: {amount: number; unit: string; baseUnits: string}
  totalPrice: {amount: number; unit: string; baseUnits: string}
  timeout: number
  serviceUrls: {port: number; url: string}[]
  wallet: {
    address: string
    sol: {amount: number; unit: string}
    tokens: {amount: number; unit: string; baseUnits: string}
  }
}

async function tokenBalance(chain: SandboxChain, owner: PublicKey): Promise<bigint> {
  const account = getAssociatedTokenAddressSync(chain.mint, owner, true)
  if (!(await chain.connection.getAccountInfo(account))) return 0n
  return BigInt((await chain.connection.getTokenAccountBalance(account)).value.amount)
}

describe('gpunet job post', function () {
  this.timeout(90_000)
  let box: CliSandbox
  let chain: SandboxChain
  let file: string

  before(async () => {
    box = cliSandbox()
    file = join(box.dir, 'job.json')
    writeFileSync(file, JSON.stringify(DEFINITION, null, 2))
    assert.equal((await box.run(['localnet', 'start', '--detach', '--no-node'])).code, 0)
    chain = await sandboxChain(box)
  })
  after(async () => {
    await box.cleanup()
  })

  it('posts a job and prints network, balances, price, total, job address and QUEUED', async () => {
    const result = await box.run(['job', 'post', '--file', file])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stderr, /No service URL: the localnet runs no gateway for exposed ports yet\./)
    const job = /^Posted job (\w+) on localnet$/m.exec(result.stdout)?.[1]
    assert.ok(job, result.stdout)
    assert.match(result.stdout, /^ {2}Network +localnet$/m)
    assert.match(result.stdout, /^ {2}Balance +99\.99\d+ SOL, 999\.28 tokens$/m)
    assert.match(result.stdout, /^ {2}Price +0\.0001 tokens\/s$/m)
    assert.match(result.stdout, /^ {2}Timeout +7200 s$/m)
    assert.match(result.stdout, /^ {2}Total price +0\.72 tokens$/m)
    assert.match(result.stdout, new RegExp(`^ {2}Job +${job}$`, 'm'))
    assert.match(result.stdout, /^ {2}Status +QUEUED$/m)

    const account = decodeJobAccount((await chain.connection.getAccountInfo(new PublicKey(job)))!.data)
    const cid = computeCidV0(uploaded(DEFINITION)).cid
    assert.deepEqual(account.ipfsJob, ipfsHashToBytes(cid))
    assert.ok(account.market.equals(chain.market))
    assert.equal(account.price, 100n)
    assert.equal(account.timeout, 7200n)
    assert.equal(account.state, JobState.QUEUED)
    assert.ok(account.project.equals(chain.wallet.publicKey))
    // the content store holds the definition without its editor hint
    const stored = (await (await fetch(`${chain.contentStoreUrl}/ipfs/${cid}`)).json()) as Record<string, unknown>
    assert.equal(stored.$schema, undefined)
    assert.deepEqual(stored.ops, DEFINITION.ops)
  })

  it('prints one JSON document with amounts as numbers and units, and get shows the same job', async () => {
    const result = await box.run(['job', 'post', '--file', file, '--timeout', '600', '--json'])
    assert.equal(result.code, 0, result.stderr)
    const report = JSON.parse(result.stdout) as PostJson
    assert.equal(report.network, 'localnet')
    assert.equal(report.status, 'QUEUED')
    assert.equal(report.market, chain.market.toBase58())
    assert.deepEqual(report.pricePerSecond, {amount: 0.0001, unit: 'token', baseUnits: '100'})
    assert.deepEqual(report.totalPrice, {amount: 0.06, unit: 'token', baseUnits: '60000'})
    assert.equal(report.timeout, 600)
    assert.deepEqual(report.serviceUrls, [], 'no gateway runs on this localnet')
    assert.equal(report.wallet.address, chain.wallet.publicKey.toBase58())
    assert.deepEqual(report.wallet.tokens, {amount: 999.22, unit: 'token', baseUnits: '999220000'})
    assert.equal(report.wallet.sol.unit, 'SOL')

    const human = await box.run(['job', 'get', report.job])
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, new RegExp(`^ {2}Job +${report.job}$`, 'm'))
    assert.match(human.stdout, /^ {2}Status +QUEUED$/m)
    assert.match(human.stdout, new RegExp(`^ {2}Market +${chain.market.toBase58()}$`, 'm'))
    assert.match(human.stdout, /^ {2}Price +0\.0001 tokens\/s$/m)
    assert.match(human.stdout, /^ {2}Cost so far +0 tokens$/m)
    assert.doesNotMatch(human.stdout, /Node|Started|Result/)

    const json = await box.run(['job', 'get', report.job, '--json'])
    assert.equal(json.code, 0, json.stderr)
    const got = JSON.parse(json.stdout) as PostJson & {node: null; result: null; costSoFar: {baseUnits: string}}
    assert.equal(got.job, report.job)
    assert.equal(got.status, 'QUEUED')
    assert.equal(got.definition, report.definition)
    assert.equal(got.node, null)
    assert.equal(got.result, null)
    assert.equal(got.costSoFar.baseUnits, '0')
  })

  it('posts the same file twice as two jobs', async () => {
    const first = JSON.parse(
      (await box.run(['job', 'post', '--file', file, '--timeout', '60', '--json'])).stdout,
    ) as PostJson
    const second = JSON.parse(
      (await box.run(['job', 'post', '--file', file, '--timeout', '60', '--json'])).stdout,
    ) as PostJson
    assert.notEqual(first.job, second.job)
    assert.equal(first.definition, second.definition)
    for (const job of [first.job, second.job]) {
      assert.ok(await chain.connection.getAccountInfo(new PublicKey(job)), `${job} is on chain`)
    }
  })

  it('exits 4 at once, with what is there and what is needed, when the wallet cannot pay: nothing uploaded or sent', async () => {
    const poor = Keypair.generate()
    const wallet = join(box.dir, 'poor.json')
    writeFileSync(wallet, JSON.stringify([...poor.secretKey]))
    assert.equal(
      (await box.run(['localnet', 'fund', poor.publicKey.toBase58(), '--sol', '1', '--tokens', '0.5'])).code,
      0,
    )
    const unique = {...DEFINITION, meta: {trigger: 'cli', note: 'poor'}}
    const poorFile = join(box.dir, 'poor-job.json')
    writeFileSync(poorFile, JSON.stringify(unique))
    const result = await runCli(['job', 'post', '--file', poorFile, '--wallet', wallet], {env: box.env})
    assert.equal(result.code, 4)
    assert.equal(result.stdout, '')
    assert.match(result.stderr, /Error: the wallet cannot pay for this job: it has 0\.5 tokens, 0\.72 tokens needed/)
    const cid = computeCidV0(uploaded(unique)).cid
    assert.equal((await fetch(`${chain.contentStoreUrl}/ipfs/${cid}`)).status, 404, 'not uploaded')
    assert.equal(await chain.connection.getBalance(poor.publicKey), 1_000_000_000, 'no fee paid: nothing sent')
    assert.equal(await tokenBalance(chain, poor.publicKey), 500_000n)

    const json = await runCli(['job', 'post', '--file', poorFile, '--wallet', wallet, '--json'], {env: box.env})
    assert.equal(json.code, 4)
    assert.equal((JSON.parse(json.stdout) as {error: {code: string}}).error.code, 'insufficient_balance')
  })

  it('exits 3 with the validator errors for an invalid definition, sending nothing', async () => {
    const bad = join(box.dir, 'bad.json')
    writeFileSync(bad, JSON.stringify({version: '0.1', type: 'container', ops: []}))
    const before = await chain.connection.getBalance(chain.wallet.publicKey)
    const result = await box.run(['job', 'post', '--file', bad])
    assert.equal(result.code, 3)
    assert.equal(result.stdout, '')
    assert.match(result.stderr, /Error: .*bad\.json is not a valid job definition:\n {2}.*bad\.json:1:\d+ ops: /)
    assert.match(result.stderr, /nothing was uploaded or sent/)
    assert.equal(await chain.connection.getBalance(chain.wallet.publicKey), before)

    const json = await box.run(['job', 'post', '--file', bad, '--json'])
    assert.equal(json.code, 3)
    assert.equal((JSON.parse(json.stdout) as {error: {code: string}}).error.code, 'invalid_definition')
  })

  it('--wait gives up with exit 124 when no node takes the job in time', async () => {
    const result = await box.run(['job', 'post', '--file', file, '--timeout', '60', '--wait', '--wait-timeout', '1'])
    assert.equal(result.code, 124)
    assert.equal(result.stdout, '')
    assert.match(result.stderr, /Error: job \w+ is still QUEUED after 1 s/)
    assert.match(result.stderr, /Hint: follow it with `gpunet job get \w+ --wait`/)
  })

  it('exits 7 for a --market that holds no market, before anything is uploaded', async () => {
    const result = await box.run([
      'job',
      'post',
      '--file',
      file,
      '--market',
      Keypair.generate().publicKey.toBase58(),
      '--json',
    ])
    assert.equal(result.code, 7)
    assert.equal((JSON.parse(result.stdout) as {error: {code: string}}).error.code, 'market_not_found')
  })

  it('get exits 7 for an address that holds no job', async () => {
    const result = await box.run(['job', 'get', Keypair.generate().publicKey.toBase58()])
    assert.equal(result.code, 7)
    assert.match(result.stderr, /Error: no job at \w+ on this network/)
    const json = await box.run(['job', 'get', Keypair.generate().publicKey.toBase58(), '--json'])
    assert.equal(json.code, 7)
    assert.equal((JSON.parse(json.stdout) as {error: {code: string}}).error.code, 'job_not_found')
  })

  it('warns that no localnet node has a GPU when the job needs one (here the node is off), and still posts it', async () => {
    const gpuFile = join(box.dir, 'gpu.json')
    writeFileSync(gpuFile, JSON.stringify({...DEFINITION, global: {gpu: true}}))
    const human = await box.run(['job', 'post', '--file', gpuFile, '--timeout', '60'])
    assert.equal(human.code, 0, human.stderr)
    assert.match(
      human.stderr,
      /^Warning: no localnet node has a GPU: this job will stay QUEUED .*`gpunet localnet start --gpus N`/m,
    )
    assert.match(human.stdout, /^ {2}Status +QUEUED$/m)

    const json = await box.run(['job', 'post', '--file', gpuFile, '--timeout', '60', '--json'])
    assert.equal(json.code, 0, json.stderr)
    const {warnings} = JSON.parse(json.stdout) as {warnings: string[]}
    assert.equal(warnings.length, 1)
    assert.match(warnings[0]!, /^no localnet node has a GPU/)

    const plain = await box.run(['job', 'post', '--file', file, '--timeout', '60', '--json'])
    assert.deepEqual((JSON.parse(plain.stdout) as {warnings: string[]}).warnings, [])
    assert.doesNotMatch(plain.stderr, /GPU/)
  })
})

describe('gpunet job post on devnet and mainnet', function () {
  this.timeout(30_000)
  let box: CliSandbox
  let file: string

  before(() => {
    box = cliSandbox()
    file = join(box.dir, 'job.json')
  })
  after(async () => {
    await box.cleanup()
  })

  it('names the network host setting when a job exposes a port and none is set, before any network call', async () => {
    writeFileSync(file, JSON.stringify(DEFINITION))
    const result = await box.run(['job', 'post', '--file', file, '--network', 'devnet', '--rpc', 'http://127.0.0.1:9'])
    assert.equal(result.code, 2)
    assert.match(result.stderr, /Error: no networkHost is configured for devnet/)
    assert.match(
      result.stderr,
      /pass --network-host, set GPUNET_NETWORK_HOST, or set "networks": \{"devnet": \{"networkHost"/,
    )
  })

  it('names every content store setting when none is set, before any network call (exit 2)', async () => {
    const {ops} = DEFINITION
    writeFileSync(file, JSON.stringify({version: '0.1', type: 'container', ops: [{...ops[0], args: {image: 'x'}}]}))
    writeFileSync(box.env.GPUNET_WALLET!, JSON.stringify([...Keypair.generate().secretKey]))
    const args = ['job', 'post', '--file', file, '--network', 'mainnet', '--rpc', 'http://127.0.0.1:9', '--json']
    const result = await box.run(args)
    rmSync(box.env.GPUNET_WALLET!)
    assert.equal(result.code, 2, result.stdout)
    const {error} = JSON.parse(result.stdout) as {error: {code: string; hint: string}}
    assert.equal(error.code, 'content_store_missing')
    for (const way of ['GPUNET_PINATA_JWT', 'GPUNET_PINNING_SERVICE_URL', 'GPUNET_CONTENT_STORE_URL', '"pinataJwt"']) {
      assert.ok(error.hint.includes(way), `${way} in ${error.hint}`)
    }
  })

  it('refuses a missing wallet off localnet without creating one, then exits 5 naming an RPC node it cannot reach', async () => {
    const env = {...box.env, GPUNET_CONTENT_STORE_URL: 'http://127.0.0.1:9'}
    writeFileSync(file, JSON.stringify({...DEFINITION, ops: [{...DEFINITION.ops[0], args: {image: 'x'}}]}))
    const args = ['job', 'post', '--file', file, '--network', 'devnet', '--rpc', 'http://127.0.0.1:9']
    const missing = await runCli(args, {env})
    assert.equal(missing.code, 3)
    assert.match(missing.stderr, /Error: cannot read the wallet .*wallet\.json: no such file/)
    assert.equal(existsSync(box.env.GPUNET_WALLET!), false)

    writeFileSync(box.env.GPUNET_WALLET!, JSON.stringify([...Keypair.generate().secretKey]))
    const result = await runCli(args, {env})
    assert.equal(result.code, 5, result.stderr)
    assert.match(result.stderr, /Error: the Solana RPC node http:\/\/127\.0\.0\.1:9 failed/)
  })
})

describe('gpunet job get without a running localnet', function () {
  this.timeout(30_000)
  const box = useCliSandbox()

  it('starts one in the background, says so on stderr, and exits 7 for an unknown job', async () => {
    const result = await box.run(['job', 'get', Keypair.generate().publicKey.toBase58()])
    assert.equal(result.code, 7)
    assert.match(result.stderr, /^Started a localnet in the background at http:\/\/127\.0\.0\.1:\d+ /)
    assert.equal(result.stdout, '')
  })
})
