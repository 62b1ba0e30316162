/**
 * `job post|get|stop` against devnet and mainnet as the deployed program lays them out, through stand-ins on
 * 127.0.0.1: a JSON-RPC node serving accounts in their allocated sizes (encoded with the official client's codecs),
 * a pinning service and a gateway. What gpunet sends is compared with what the official client builds.
 */
import {strict as assert} from 'node:assert'
import {createHash} from 'node:crypto'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {JobsClient} from '@nosana/kit'
import {validateJobDefinition} from '@nosana/types'
import {ASSOCIATED_TOKEN_PROGRAM_ID, getAssociatedTokenAddressSync} from '@solana/spl-token'
import {
  ComputeBudgetInstruction,
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  type Transaction,
  type TransactionInstruction,
} from '@solana/web3.js'
import bs58 from 'bs58'

import {NETWORK_PRESETS} from '../../../src/lib/market/index.js'
import {type CliSandbox, useCliSandbox} from '../../helpers/cli-localnet.js'
import {
  allocated,
  type JobFields,
  MARKET_TIMEOUT,
  putJobAccount,
  putRunAccount,
  type RealNetwork as Network,
  REFERENCE,
  seedNetwork,
  SIZES,
} from '../../helpers/standin-network.js'
import {runCli} from '../../helpers/cli.js'
import {networkSdk} from '../../helpers/network-names.js'
import {
  cidDigest,
  ipfsCid,
  rentExempt,
  startStandinPinning,
  startStandinRpc,
  type StandinPinning,
  type StandinRpc,
} from '../../helpers/standin.js'

const JWT = 'test-jwt-not-a-secret'
const DEFINITION = {
  version: '0.1',
  type: 'container',
  ops: [{id: 'hi', type: 'container/run', args: {image: 'alpine'}}],
}
/** The bytes `job post` uploads. */
const UPLOADED = new TextEncoder().encode(`${JSON.stringify(DEFINITION, null, 2)}\n`)

interface Setup {
  rpc: StandinRpc
  pinning: StandinPinning
  wallet: Keypair
  env: NodeJS.ProcessEnv
  args: (network: Network, ...rest: string[]) => string[]
}

describe('gpunet job on devnet and mainnet, as the deployed program expects (stand-in RPC and pinning service)', function () {
  this.timeout(60_000)
  const box: CliSandbox = useCliSandbox()
  let s: Setup
  let file: string

  beforeEach(async () => {
    const rpc = await startStandinRpc()
    const pinning = await startStandinPinning(JWT)
    const wallet = Keypair.generate()
    writeFileSync(box.env.GPUNET_WALLET!, JSON.stringify([...wallet.secretKey]))
    file = join(box.dir, 'job.json')
    writeFileSync(file, JSON.stringify(DEFINITION))
    const env = {
      ...box.env,
      GPUNET_PINATA_JWT: JWT,
      GPUNET_PINNING_SERVICE_URL: pinning.url,
      GPUNET_IPFS_GATEWAY: pinning.url,
      // No real host manager is asked: this stand-in answers none of its routes (`market list` warns, exit 0).
      GPUNET_HOST_MANAGER_URL: pinning.url,
    }
    s = {
      rpc,
      pinning,
      wallet,
      env,
      args: (network, ...rest) => [...rest, '--network', network, '--rpc', rpc.url, '--json'],
    }
  })
  afterEach(async () => {
    await s.rpc.close()
    await s.pinning.close()
  })

  const network = (name: Network) => seedNetwork(s.rpc, name, s.wallet.publicKey)
  const putJob = (name: Network, address: PublicKey, fields: JobFields) =>
    putJobAccount(s.rpc, name, address, {...fields, payer: s.wallet.publicKey})
  const putRun = (name: Network, job: PublicKey, node: PublicKey, payer: PublicKey) =>
    putRunAccount(s.rpc, name, job, node, payer)

  /** A job of this wallet whose definition the gateway serves. */
  async function postedJob(name: Network): Promise<PublicKey> {
    const cid = await ipfsCid(UPLOADED)
    s.pinning.content.set(cid, UPLOADED)
    const job = Keypair.generate().publicKey
    putJob(name, job, {ipfsJob: cidDigest(cid), timeout: 600n, state: 0})
    return job
  }

  const metas = (ix: TransactionInstruction) =>
    ix.keys.map((k) => ({address: k.pubkey.toBase58(), role: (k.isSigner ? 2 : 0) | (k.isWritable ? 1 : 0)}))
  /**
   * The official instruction's accounts as they read in a signed transaction, where an account's flags are the
   * union over the message: the fee payer signs and is written, and an account named twice carries both roles.
   */
  const inMessage = (ix: {accounts: {address: string; role: number}[]}, feePayer: PublicKey) =>
    ix.accounts.map(({address}) => ({
      address,
      role: ix.accounts
        .filter((a) => a.address === address)
        .reduce((role, a) => role | a.role, address === feePayer.toBase58() ? 3 : 0),
    }))
  const signer = (key: PublicKey) => ({address: key.toBase58(), signTransactions: async () => []})
  const budget = (tx: Transaction) => {
    const out: {limit?: number; price?: bigint} = {}
    for (const ix of tx.instructions.filter((i) => i.programId.equals(ComputeBudgetProgram.programId))) {
      const type = ComputeBudgetInstruction.decodeInstructionType(ix)
      if (type === 'SetComputeUnitLimit') out.limit = ComputeBudgetInstruction.decodeSetComputeUnitLimit(ix).units
      if (type === 'SetComputeUnitPrice')
        out.price = BigInt(ComputeBudgetInstruction.decodeSetComputeUnitPrice(ix).microLamports)
    }
    return out
  }

  it('posts on devnet with nothing but a wallet and a content store: the `list` the program expects, no priority fee', async () => {
    network('devnet')
    s.rpc.unitsConsumed = 40_000
    const result = await runCli(s.args('devnet', 'job', 'post', '--file', file), {env: s.env})
    assert.equal(result.code, 0, result.stderr + result.stdout)
    const report = JSON.parse(result.stdout) as {status: string; job: string; fee: {computeUnitPrice: string}}
    assert.equal(report.status, 'QUEUED')
    assert.equal(report.fee.computeUnitPrice, '0')

    // The definition went to the pinning service with the JWT, as CIDv0.
    assert.equal(s.pinning.uploads.length, 1)
    assert.equal(s.pinning.uploads[0]!.authorization, `Bearer ${JWT}`)
    assert.deepEqual(JSON.parse(s.pinning.uploads[0]!.options!), {cidVersion: 0})
    assert.deepEqual(s.pinning.uploads[0]!.bytes, UPLOADED)

    assert.equal(s.rpc.sent.length, 1)
    const tx = s.rpc.sent[0]!
    assert.deepEqual(budget(tx), {limit: Math.ceil(40_000 * 1.2) + 1000})
    const list = tx.instructions.at(-1)!
    const preset = NETWORK_PRESETS.devnet
    const [job, run] = [list.keys[0]!.pubkey, list.keys[2]!.pubkey]
    assert.equal(job.toBase58(), report.job)
    const official = JobsClient.getListInstruction(
      {
        job: signer(job),
        market: preset.market!.toBase58(),
        run: signer(run),
        user: getAssociatedTokenAddressSync(preset.mint!, s.wallet.publicKey).toBase58(),
        vault: REFERENCE.devnet.vault,
        payer: signer(s.wallet.publicKey),
        rewardsReflection: REFERENCE.rewardsReflection,
        rewardsVault: REFERENCE.devnet.rewardsVault,
        authority: signer(s.wallet.publicKey),
        rewardsProgram: REFERENCE.rewardsProgram,
        ipfsJob: cidDigest(await ipfsCid(UPLOADED)),
        timeout: MARKET_TIMEOUT,
      } as never,
      {programAddress: preset.programId.toBase58() as never},
    ) as unknown as {programAddress: string; accounts: {address: string; role: number}[]; data: Uint8Array}
    assert.equal(list.programId.toBase58(), official.programAddress)
    assert.deepEqual(metas(list), inMessage(official, s.wallet.publicKey))
    assert.deepEqual(Buffer.from(list.data), Buffer.from(official.data))
    // The job, run and payer signed.
    assert.equal(tx.signatures.length, 3)
    assert.ok(tx.verifySignatures())

    // Runs are looked up by discriminator and job, never by size.
    const lookups = s.rpc.requests.filter((r) => r.method === 'getProgramAccounts')
    assert.ok(lookups.length > 0)
    for (const {params} of lookups) {
      const filters = (params[1] as {filters: {dataSize?: number; memcmp?: {offset: number}}[]}).filters
      assert.deepEqual(
        filters.map((f) => f.memcmp?.offset),
        [0, 8],
      )
      assert.ok(filters.every((f) => f.dataSize === undefined))
    }
  })

  it("refuses a spec-valid job the network's nodes would refuse (exit 3), uploading and sending nothing", async () => {
    network('devnet')
    const refused = {...DEFINITION, ops: [{id: 'hi', type: 'container/run', args: {image: 'alpine', output: '/out'}}]}
    writeFileSync(file, JSON.stringify(refused))
    const valid = await runCli(['job', 'validate', file], {env: s.env})
    assert.equal(valid.code, 0, 'spec 0.1 allows output')
    const result = await runCli(s.args('devnet', 'job', 'post', '--file', file), {env: s.env})
    assert.equal(result.code, 3, result.stderr)
    const error = JSON.parse(result.stdout) as {error: {code: string; message: string; hint: string}}
    assert.equal(error.error.code, 'no_network_equivalent')
    assert.match(error.error.message, /ops\[0\]\.args\.output: the network's nodes no longer read `output`/)
    assert.match(error.error.hint, /nothing was uploaded or sent/)
    assert.equal(s.pinning.uploads.length, 0, 'nothing uploaded')
    assert.equal(s.rpc.sent.length, 0, 'nothing sent')
    assert.equal(s.rpc.requests.length, 0, 'refused before any network call')
  })

  it("posts an exposed job on devnet with no host set: the network's form uploaded, each operation's hashed URL printed", async () => {
    network('devnet')
    const health = {type: 'http', path: '/', method: 'GET', expected_status: 200}
    const exposed = {
      version: '0.1',
      type: 'container',
      deployment_id: 'my-service',
      ops: [
        {id: 'web', type: 'container/run', args: {image: 'nginx', expose: [{port: 80, health_checks: [health]}]}},
        {id: 'api', type: 'container/run', args: {image: 'api', expose: [{port: 80}, {port: 8080}], required_vram: 4}},
      ],
    }
    writeFileSync(file, JSON.stringify(exposed))
    const result = await runCli(s.args('devnet', 'job', 'post', '--file', file), {env: s.env})
    assert.equal(result.code, 0, result.stderr + result.stdout)
    const report = JSON.parse(result.stdout) as {
      job: string
      project: string
      serviceUrls: {op: string; port: number; url: string}[]
      deploymentUrls: {op: string; port: number; url: string}[]
    }
    // The URLs current nodes serve: base58(SHA-512("<opIndex>:<port>:<job>")), first 44 characters, computed here
    // from the reference's recipe.
    const id = (op: number, port: number) =>
      bs58.encode(createHash('sha512').update(`${op}:${port}:${report.job}`).digest()).slice(0, 44)
    assert.deepEqual(report.serviceUrls, [
      {op: 'web', port: 80, url: `https://${id(0, 80)}.node.k8s.dev.nos.ci`, kind: 'network'},
      {op: 'api', port: 80, url: `https://${id(1, 80)}.node.k8s.dev.nos.ci`, kind: 'network'},
      {op: 'api', port: 8080, url: `https://${id(1, 8080)}.node.k8s.dev.nos.ci`, kind: 'network'},
    ])
    // As the network's CLI prints them: each exposed operation's domain under the FRP server address, the poster
    // being the posting wallet (the job's project), computed with the sdk's own functions.
    const sdk = await networkSdk()
    const hash = sdk.createHash(`my-service:${report.project}`, 45)
    assert.deepEqual(report.deploymentUrls, [
      {op: 'web', port: 80, url: `https://${sdk.getExposeIdHash(hash, 'web', 0)}.node.k8s.dev.nos.ci`},
      {op: 'api', port: 80, url: `https://${sdk.getExposeIdHash(hash, 'api', 0)}.node.k8s.dev.nos.ci`},
    ])
    const uploaded = JSON.parse(new TextDecoder().decode(s.pinning.uploads[0]!.bytes)) as typeof exposed
    assert.deepEqual(uploaded.ops[0]!.args.expose, [{port: 80, health_checks: [{...health, continuous: false}]}])
    assert.equal('required_vram' in uploaded.ops[1]!.args, false)
    assert.deepEqual((uploaded as {meta?: unknown}).meta, {system_resources: {required_vram: 4}})
    assert.equal(validateJobDefinition(uploaded).success, true, "the network's own validator takes the upload")
    assert.match(
      result.stderr,
      /In the network's form: ops\[0\]\.args\.expose\[0\]\.health_checks each gained `continuous: false`/,
    )
  })

  it('carries a compute-unit price on mainnet: a percentile of recent fees on the written accounts, capped', async () => {
    network('mainnet')
    s.rpc.unitsConsumed = 40_000
    s.rpc.prioritizationFees = [0, 0, 1000, 20_000, 50_000, 80_000, 100_000, 5_000_000]
    const result = await runCli(s.args('mainnet', 'job', 'post', '--file', file, '--yes'), {env: s.env})
    assert.equal(result.code, 0, result.stderr + result.stdout)
    const limit = Math.ceil(40_000 * 1.2) + 1000
    assert.deepEqual(budget(s.rpc.sent[0]!), {limit, price: 100_000n})
    const report = JSON.parse(result.stdout) as {fee: {priority: {baseUnits: string}; baseUnits: string}}
    assert.equal(report.fee.priority.baseUnits, String(Math.ceil((100_000 * limit) / 1e6)))
    assert.equal(report.fee.baseUnits, String(3 * 5000 + Math.ceil((100_000 * limit) / 1e6)))
    assert.match(result.stderr, /Transaction fee: .*SOL \(priority .*100000 micro-lamports\/CU x 49000 CU\)/)
    // The fees were asked for the accounts the transaction writes.
    const asked = s.rpc.requests.find((r) => r.method === 'getRecentPrioritizationFees')!.params[0] as string[]
    assert.ok(asked.includes(NETWORK_PRESETS.mainnet.market!.toBase58()))
    assert.ok(asked.includes(REFERENCE.mainnet.vault))

    // --max-priority-fee caps the whole priority fee (SOL): 0.000001 SOL over 49,000 CU.
    const capped = await runCli(
      s.args('mainnet', 'job', 'post', '--file', file, '--yes', '--max-priority-fee', '0.000001'),
      {env: s.env},
    )
    assert.equal(capped.code, 0, capped.stderr)
    assert.deepEqual(budget(s.rpc.sent[1]!), {limit, price: (1000n * 1_000_000n) / BigInt(limit)})

    // Off on request.
    const off = await runCli(s.args('mainnet', 'job', 'post', '--file', file, '--yes', '--no-priority-fee'), {
      env: s.env,
    })
    assert.equal(off.code, 0, off.stderr)
    assert.deepEqual(budget(s.rpc.sent[2]!), {limit})
  })

  it('shows a job with a 120-byte run as RUNNING, and `stop` sends `end` for it (creating the node’s token account)', async () => {
    network('devnet')
    const job = await postedJob('devnet')
    const node = Keypair.generate().publicKey
    const runPayer = Keypair.generate().publicKey
    const run = putRun('devnet', job, node, runPayer)
    putRun('devnet', Keypair.generate().publicKey, node, runPayer) // another job's run
    const got = await runCli(s.args('devnet', 'job', 'get', job.toBase58()), {env: s.env})
    assert.equal(got.code, 0, got.stderr)
    const report = JSON.parse(got.stdout) as {status: string; node: string; startedAt: string}
    assert.equal(report.status, 'RUNNING')
    assert.equal(report.node, node.toBase58())
    assert.equal(report.startedAt, new Date(1_700_000_000_000).toISOString())

    const stopped = await runCli(s.args('devnet', 'job', 'stop', job.toBase58()), {env: s.env})
    assert.equal(stopped.code, 0, stopped.stderr)
    assert.equal((JSON.parse(stopped.stdout) as {action: string}).action, 'end')
    const tx = s.rpc.sent[0]!
    const [create, end] = tx.instructions.filter((ix) => !ix.programId.equals(ComputeBudgetProgram.programId))
    const preset = NETWORK_PRESETS.devnet
    const nodeAta = getAssociatedTokenAddressSync(preset.mint!, node)
    // The node has no token account yet: created first, idempotently (instruction 1), paid by the project.
    assert.ok(create!.programId.equals(ASSOCIATED_TOKEN_PROGRAM_ID))
    assert.deepEqual([...create!.data], [1])
    assert.ok(create!.keys[1]!.pubkey.equals(nodeAta))
    assert.ok(create!.keys[0]!.pubkey.equals(s.wallet.publicKey))
    const official = JobsClient.getEndInstruction(
      {
        job: job.toBase58(),
        market: preset.market!.toBase58(),
        run: run.toBase58(),
        deposit: getAssociatedTokenAddressSync(preset.mint!, s.wallet.publicKey).toBase58(),
        user: nodeAta.toBase58(),
        vault: REFERENCE.devnet.vault,
        payer: runPayer.toBase58(),
        authority: signer(s.wallet.publicKey),
      } as never,
      {programAddress: preset.programId.toBase58() as never},
    ) as unknown as {accounts: {address: string; role: number}[]; data: Uint8Array}
    assert.deepEqual(metas(end!), inMessage(official, s.wallet.publicKey))
    assert.deepEqual(Buffer.from(end!.data), Buffer.from(official.data))
  })

  it('takes no account for a job or a market unless the network’s jobs program owns it (exit 7)', async () => {
    network('devnet')
    const job = await postedJob('devnet')
    const impostor = Keypair.generate().publicKey
    // The same bytes as a real job and market, held by another program.
    const copy = (from: PublicKey) => {
      const account = s.rpc.accounts.get(from.toBase58())!
      const address = Keypair.generate().publicKey
      s.rpc.set(address, {...account, owner: impostor})
      return address
    }
    const fakeJob = copy(job)
    const fakeMarket = copy(NETWORK_PRESETS.devnet.market!)
    assert.equal((await runCli(s.args('devnet', 'job', 'get', job.toBase58()), {env: s.env})).code, 0)
    for (const [command, address, code] of [
      ['job', fakeJob, 'job_not_found'],
      ['market', fakeMarket, 'market_not_found'],
    ] as const) {
      const r = await runCli(s.args('devnet', command, 'get', address.toBase58()), {env: s.env})
      assert.equal(r.code, 7, r.stderr + r.stdout)
      const error = (JSON.parse(r.stdout) as {error: {code: string; message: string}}).error
      assert.equal(error.code, code)
      assert.match(error.message, new RegExp(`belongs to program ${impostor.toBase58()}`))
    }
  })

  it('`stop` sends `delist` for a queued job', async () => {
    network('devnet')
    const job = await postedJob('devnet')
    const got = await runCli(s.args('devnet', 'job', 'get', job.toBase58()), {env: s.env})
    assert.equal((JSON.parse(got.stdout) as {status: string}).status, 'QUEUED')
    const stopped = await runCli(s.args('devnet', 'job', 'stop', job.toBase58()), {env: s.env})
    assert.equal(stopped.code, 0, stopped.stderr)
    assert.equal((JSON.parse(stopped.stdout) as {action: string}).action, 'delist')
    const [delist, ...rest] = s.rpc.sent[0]!.instructions.filter(
      (ix) => !ix.programId.equals(ComputeBudgetProgram.programId),
    )
    assert.equal(rest.length, 0)
    const preset = NETWORK_PRESETS.devnet
    const official = JobsClient.getDelistInstruction(
      {
        job: job.toBase58(),
        market: preset.market!.toBase58(),
        deposit: getAssociatedTokenAddressSync(preset.mint!, s.wallet.publicKey).toBase58(),
        payer: s.wallet.publicKey.toBase58(),
        vault: REFERENCE.devnet.vault,
        authority: signer(s.wallet.publicKey),
      } as never,
      {programAddress: preset.programId.toBase58() as never},
    ) as unknown as {accounts: {address: string; role: number}[]; data: Uint8Array}
    assert.deepEqual(metas(delist!), inMessage(official, s.wallet.publicKey))
    assert.deepEqual(Buffer.from(delist!.data), Buffer.from(official.data))
  })

  it('refuses a content store that answers another CID than the bytes hash to: exit 5, nothing sent', async () => {
    network('devnet')
    s.pinning.lie = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o'
    const result = await runCli(s.args('devnet', 'job', 'post', '--file', file), {env: s.env})
    assert.equal(result.code, 5, result.stdout)
    const {error} = JSON.parse(result.stdout) as {error: {code: string; message: string}}
    assert.equal(error.code, 'content_store_mismatch')
    assert.match(error.message, new RegExp(await ipfsCid(UPLOADED)))
    assert.equal(s.rpc.sent.length, 0)
  })

  it('refuses a pinning service JWT it does not accept with exit 6, nothing sent', async () => {
    network('devnet')
    const result = await runCli(s.args('devnet', 'job', 'post', '--file', file), {
      env: {...s.env, GPUNET_PINATA_JWT: 'wrong'},
    })
    assert.equal(result.code, 6, result.stdout)
    assert.equal((JSON.parse(result.stdout) as {error: {code: string}}).error.code, 'content_store_denied')
    assert.equal(s.rpc.sent.length, 0)
  })

  it('retries a rate-limited RPC node, then exits 5 with a hint to set --rpc', async () => {
    network('devnet')
    const job = await postedJob('devnet')
    s.rpc.rateLimited = 2
    const retried = await runCli(s.args('devnet', 'job', 'get', job.toBase58()), {env: s.env})
    assert.equal(retried.code, 0, retried.stderr)

    s.rpc.rateLimited = Number.POSITIVE_INFINITY
    const refused = await runCli(s.args('devnet', 'job', 'get', job.toBase58()), {env: s.env})
    assert.equal(refused.code, 5, refused.stdout)
    const {error} = JSON.parse(refused.stdout) as {error: {code: string; hint: string}}
    assert.equal(error.code, 'rpc_rate_limited')
    assert.match(error.hint, /--rpc/)
  })

  it('lists the markets from the chain, and shows one with its queue (--json), 7 for an address that holds none', async () => {
    network('devnet')
    const preset = NETWORK_PRESETS.devnet
    const gated = Keypair.generate().publicKey
    const [node1, node2, collection] = [0, 1, 2].map(() => Keypair.generate().publicKey.toBase58())
    s.rpc.set(gated, {
      owner: preset.programId,
      lamports: rentExempt(SIZES.market),
      data: allocated(
        'MarketAccount',
        {
          authority: Keypair.generate().publicKey.toBase58(),
          jobExpiration: 600,
          jobPrice: 2_500_000n,
          jobTimeout: 900,
          jobType: 4,
          vault: Keypair.generate().publicKey.toBase58(),
          vaultBump: 254,
          nodeAccessKey: collection,
          nodeXnosMinimum: 5_000_000_000n,
          queueType: 1,
          queue: [node1, node2],
        },
        SIZES.market,
      ),
    })
    await postedJob('devnet') // a job account of the same program, not a market
    const listed = await runCli(s.args('devnet', 'market', 'list'), {env: s.env})
    assert.equal(listed.code, 0, listed.stderr)
    const {markets, defaultMarket} = JSON.parse(listed.stdout) as {
      defaultMarket: string
      markets: {
        market: string
        address: string
        pricePerSecond: {amount: number}
        jobTimeout: number
        queue: object
        nodeStakeMinimum: {amount: number}
        accessKey: string | null
      }[]
    }
    assert.equal(defaultMarket, preset.market!.toBase58())
    const byAddress = new Map(markets.map((m) => [m.market, m]))
    assert.equal(markets.length, 2)
    assert.deepEqual(
      {
        ...byAddress.get(gated.toBase58())!,
        network: undefined,
        authority: undefined,
        vault: undefined,
        jobExpiration: undefined,
      },
      {
        network: undefined,
        authority: undefined,
        vault: undefined,
        jobExpiration: undefined,
        market: gated.toBase58(),
        address: gated.toBase58(),
        pricePerSecond: {amount: 2.5, unit: 'token', baseUnits: '2500000'},
        jobTimeout: 900,
        queue: {kind: 'nodes', length: 2},
        nodeStakeMinimum: {amount: 5000, unit: 'token', baseUnits: '5000000000'},
        accessKey: collection,
        pricePerHour: {amount: 9000, unit: 'token', baseUnits: '9000000000'},
        freeNodes: 2,
        queuedJobs: 0,
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
      },
    )
    assert.match(listed.stderr, /^Warning: the host manager at .* could not be read \(it answered 404\)/m)
    assert.equal(byAddress.get(preset.market!.toBase58())!.accessKey, null)
    // The listing reads each market's fields and queue length, not its 10 KiB queue.
    const call = s.rpc.requests.find((r) => r.method === 'getProgramAccounts')!
    assert.deepEqual((call.params[1] as {dataSlice: object}).dataSlice, {offset: 0, length: 151})

    const human = await runCli(['market', 'list', '--network', 'devnet', '--rpc', s.rpc.url], {env: s.env})
    assert.match(
      human.stdout,
      new RegExp(`^\\*\\s+${preset.market!.toBase58()}(\\s+-){4}\\s+0\\.036\\s+-\\s+0\\s+0\\s+3600 s\\s+none$`, 'm'),
    )
    assert.match(
      human.stdout,
      new RegExp(`${gated.toBase58()}(\\s+-){4}\\s+9000\\s+-\\s+2\\s+0\\s+900 s\\s+${collection}`),
    )

    const got = await runCli(s.args('devnet', 'market', 'get', gated.toBase58()), {env: s.env})
    assert.equal(got.code, 0, got.stderr)
    assert.deepEqual((JSON.parse(got.stdout) as {queued: string[]}).queued, [node1, node2])
    const missing = await runCli(s.args('devnet', 'market', 'get', Keypair.generate().publicKey.toBase58()), {
      env: s.env,
    })
    assert.equal(missing.code, 7)
  })
})
