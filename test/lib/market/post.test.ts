/**
 * market/jobs/post.ts in this process against a stand-in devnet (issue 26, area `market-post`): what a post costs
 * (price x timeout, rents, fee), the `list` it signs and sends, the free market's token account made on the way,
 * and each refusal before anything is uploaded or sent. The CLI tests (job post, real-networks) spawn the built
 * command, which a mutant of the source never reaches.
 */
import {strict as assert} from 'node:assert'

import {JobsClient} from '@nosana/kit'
import {getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {Keypair, PublicKey, SystemProgram} from '@solana/web3.js'

import {isGpunetError} from '../../../src/lib/errors.js'
import {marketNetwork, type MarketNetwork} from '../../../src/lib/market/connect.js'
import {NETWORK_PRESETS} from '../../../src/lib/market/index.js'
import {ataInstruction, listJob, quotePost} from '../../../src/lib/market/jobs/post.js'
import {resolveSettings} from '../../../src/lib/settings/settings.js'
import {walletFromBytes} from '../../../src/lib/keys/wallet.js'
import {JOB_CID} from '../../helpers/market.js'
import {allocated, MARKET_TIMEOUT, PRICE, REFERENCE, seedNetwork, SIZES} from '../../helpers/standin-network.js'
import {cidDigest, fundWallet, rentExempt, startStandinRpc, type StandinRpc} from '../../helpers/standin.js'

const DEVNET = NETWORK_PRESETS.devnet
const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL'
const kit = JobsClient as unknown as {
  getListInstructionDataDecoder(): {decode(b: Uint8Array): {ipfsJob: Uint8Array; timeout: bigint}}
}

/** The rejection of `promise`, which must be a GpunetError. */
async function refusal(
  promise: Promise<unknown>,
): Promise<{code: string; exitCode: number; message: string; fields?: Record<string, unknown>}> {
  try {
    await promise
  } catch (error) {
    assert.ok(isGpunetError(error), `not a GpunetError: ${String(error)}`)
    return error as never
  }
  assert.fail('expected a refusal')
}

describe('market/post: quoting and listing a job', function () {
  this.timeout(30_000)
  let rpc: StandinRpc
  let net: MarketNetwork
  const owner = Keypair.generate()
  const wallet = walletFromBytes(owner.secretKey)
  const jobRent = BigInt(rentExempt(SIZES.job))
  const runRent = BigInt(rentExempt(SIZES.run))
  const tokenAccountRent = BigInt(rentExempt(165))

  /** A market of the devnet program at a fresh address, its vault the PDA of [market, mint] unless given. */
  function putMarket(fields: {price: bigint; timeout: bigint; vault?: PublicKey}): PublicKey {
    const market = Keypair.generate().publicKey
    const [vault] = PublicKey.findProgramAddressSync([market.toBuffer(), DEVNET.mint!.toBuffer()], DEVNET.programId)
    rpc.set(market, {
      owner: DEVNET.programId,
      lamports: rentExempt(SIZES.market),
      data: allocated(
        'MarketAccount',
        {
          authority: Keypair.generate().publicKey.toBase58(),
          jobExpiration: 86_400,
          jobPrice: fields.price,
          jobTimeout: fields.timeout,
          jobType: 0,
          vault: (fields.vault ?? vault).toBase58(),
          vaultBump: 255,
          nodeAccessKey: PublicKey.default.toBase58(),
          nodeXnosMinimum: 0,
          queueType: 255,
          queue: [],
        },
        SIZES.market,
      ),
    })
    return market
  }

  beforeEach(async () => {
    rpc = await startStandinRpc()
    rpc.unitsConsumed = 20_000
    seedNetwork(rpc, 'devnet', owner.publicKey)
    net = marketNetwork(
      resolveSettings({
        network: 'devnet',
        flags: {rpcUrl: rpc.url},
        env: {GPUNET_CONTENT_STORE_URL: 'http://127.0.0.1:1', XDG_CONFIG_HOME: '/nonexistent-gpunet-config'},
      }),
    )
  })
  afterEach(() => rpc.close())

  it("prices the market's timeout: price x timeout, job and run rents, the simulated fee, three signers", async () => {
    const quote = await quotePost(net, wallet, DEVNET.market!, JOB_CID)
    assert.equal(quote.timeout, MARKET_TIMEOUT)
    assert.equal(quote.pricePerSecond, PRICE)
    assert.equal(quote.total, PRICE * MARKET_TIMEOUT)
    assert.equal(quote.rent, jobRent + runRent)
    assert.equal(quote.cid, JOB_CID)
    assert.ok(quote.market.equals(DEVNET.market!))
    assert.equal(quote.balances.tokens, 1_000_000_000n)
    // 3 signatures, no priority fee on devnet by default.
    assert.equal(quote.fee.lamports, 15_000n)
    assert.deepEqual(quote.fee, quote.transaction.fee)
    const [payer, job, run] = quote.transaction.signers
    assert.equal(quote.transaction.signers.length, 3)
    assert.ok(payer!.publicKey.equals(owner.publicKey))
    assert.ok(!job!.publicKey.equals(run!.publicKey))
    assert.ok(!job!.publicKey.equals(owner.publicKey))
    // Nothing is sent by a quote.
    assert.equal(rpc.sent.length, 0)
  })

  it('prices a given timeout instead of the market’s', async () => {
    const quote = await quotePost(net, wallet, DEVNET.market!, JOB_CID, 7n)
    assert.equal(quote.timeout, 7n)
    assert.equal(quote.total, 70n)
  })

  it("signs the `list` the program expects: the CID's digest, the timeout, the accounts in the IDL's order", async () => {
    const quote = await quotePost(net, wallet, DEVNET.market!, JOB_CID, 600n)
    const instructions = quote.transaction.instructions
    assert.equal(instructions.length, 1, 'a market with a price makes no token account')
    const list = instructions[0]!
    assert.ok(list.programId.equals(DEVNET.programId))
    assert.deepEqual([...list.data.subarray(0, 8)], [...JobsClient.LIST_DISCRIMINATOR])
    const args = kit.getListInstructionDataDecoder().decode(list.data)
    assert.deepEqual([...args.ipfsJob], [...cidDigest(JOB_CID)])
    assert.equal(args.timeout, 600n)
    const [payer, job, run] = quote.transaction.signers
    const ata = getAssociatedTokenAddressSync(DEVNET.mint!, owner.publicKey, true)
    assert.deepEqual(
      list.keys.map((k) => [k.pubkey.toBase58(), k.isSigner, k.isWritable]),
      [
        [job!.publicKey.toBase58(), true, true],
        [DEVNET.market!.toBase58(), false, true],
        [run!.publicKey.toBase58(), true, true],
        [ata.toBase58(), false, true],
        [REFERENCE.devnet.vault, false, true],
        [payer!.publicKey.toBase58(), true, true],
        [REFERENCE.rewardsReflection, false, true],
        [REFERENCE.devnet.rewardsVault, false, true],
        [owner.publicKey.toBase58(), true, false],
        [REFERENCE.rewardsProgram, false, false],
        [TOKEN_PROGRAM_ID.toBase58(), false, false],
        [SystemProgram.programId.toBase58(), false, false],
      ],
    )
  })

  it('sends the quoted `list` once and answers its job and run keys', async () => {
    const quote = await quotePost(net, wallet, DEVNET.market!, JOB_CID)
    const listed = await listJob(net, quote)
    assert.equal(rpc.sent.length, 1)
    const [, job, run] = quote.transaction.signers
    assert.ok(listed.job.equals(job!.publicKey))
    assert.ok(listed.run.equals(run!.publicKey))
    assert.deepEqual(listed.fee, quote.fee)
    assert.equal(typeof listed.signature, 'string')
    const sent = rpc.sent[0]!
    assert.equal(sent.signatures.length, 3)
    assert.ok(sent.verifySignatures())
    // The job account the program creates is the signed job key's.
    assert.ok(rpc.accounts.has(job!.publicKey.toBase58()))
  })

  it('refuses a zero timeout with exit 2 before simulating or sending', async () => {
    const error = await refusal(quotePost(net, wallet, DEVNET.market!, JOB_CID, 0n))
    assert.equal(error.code, 'invalid_timeout')
    assert.equal(error.exitCode, 2)
    assert.equal(error.message, 'the timeout must be a positive number of seconds')
    assert.ok(!rpc.requests.some((r) => r.method === 'simulateTransaction'))
  })

  it('refuses a zero market timeout as well when none is given (exit 2)', async () => {
    const market = putMarket({price: PRICE, timeout: 0n})
    const error = await refusal(quotePost(net, wallet, market, JOB_CID))
    assert.equal(error.code, 'invalid_timeout')
    assert.equal(error.exitCode, 2)
  })

  it("refuses a market whose vault is not the PDA of [market, this network's mint] (exit 2), naming both", async () => {
    const other = Keypair.generate().publicKey
    const market = putMarket({price: PRICE, timeout: 60n, vault: other})
    const error = await refusal(quotePost(net, wallet, market, JOB_CID))
    assert.equal(error.code, 'market_vault_mismatch')
    assert.equal(error.exitCode, 2)
    const [expected] = PublicKey.findProgramAddressSync([market.toBuffer(), DEVNET.mint!.toBuffer()], DEVNET.programId)
    assert.deepEqual(error.fields, {
      market: market.toBase58(),
      vault: other.toBase58(),
      expectedVault: expected.toBase58(),
    })
    assert.match(error.message, new RegExp(expected.toBase58()))
    assert.match((error as {hint?: string}).hint ?? '', /check --market and --network/)
  })

  it('takes a market whose vault is its own PDA', async () => {
    const market = putMarket({price: 3n, timeout: 100n})
    const quote = await quotePost(net, wallet, market, JOB_CID)
    assert.equal(quote.total, 300n)
  })

  it("on a free market, makes the payer's token account first and counts its rent", async () => {
    const market = putMarket({price: 0n, timeout: 100n})
    rpc.accounts.delete(getAssociatedTokenAddressSync(DEVNET.mint!, owner.publicKey, true).toBase58())
    const quote = await quotePost(net, wallet, market, JOB_CID)
    assert.equal(quote.total, 0n)
    assert.equal(quote.rent, jobRent + runRent + tokenAccountRent)
    const [ata, list] = quote.transaction.instructions
    assert.equal(quote.transaction.instructions.length, 2)
    assert.equal(ata!.programId.toBase58(), ATA_PROGRAM)
    // The idempotent create (1), for the payer's own account of the payment token.
    assert.deepEqual([...ata!.data], [1])
    assert.ok(ata!.keys[1]!.pubkey.equals(getAssociatedTokenAddressSync(DEVNET.mint!, owner.publicKey, true)))
    assert.ok(ata!.keys[2]!.pubkey.equals(owner.publicKey))
    assert.ok(ata!.keys[3]!.pubkey.equals(DEVNET.mint!))
    assert.ok(list!.programId.equals(DEVNET.programId))
  })

  it('on a free market where the payer has a token account, makes none and counts no token account rent', async () => {
    const market = putMarket({price: 0n, timeout: 100n})
    const quote = await quotePost(net, wallet, market, JOB_CID)
    assert.equal(quote.rent, jobRent + runRent)
    assert.equal(quote.transaction.instructions.length, 1)
  })

  it('on a priced market without a token account, makes none: the tokens are short (exit 4)', async () => {
    rpc.accounts.delete(getAssociatedTokenAddressSync(DEVNET.mint!, owner.publicKey, true).toBase58())
    const error = await refusal(quotePost(net, wallet, DEVNET.market!, JOB_CID))
    assert.equal(error.code, 'insufficient_balance')
    assert.equal(error.exitCode, 4)
    assert.equal(error.fields!.tokensNeeded, String(PRICE * MARKET_TIMEOUT))
    assert.equal(error.fields!.lamportsNeeded, String(jobRent + runRent), 'no token account rent counted')
  })

  it('exits 4 when the tokens cover all but one base unit of the deposit, before simulating', async () => {
    fundWallet(rpc, owner.publicKey, DEVNET.mint!, 5_000_000_000, PRICE * MARKET_TIMEOUT - 1n)
    const error = await refusal(quotePost(net, wallet, DEVNET.market!, JOB_CID))
    assert.equal(error.exitCode, 4)
    assert.ok(!rpc.requests.some((r) => r.method === 'simulateTransaction'))
    fundWallet(rpc, owner.publicKey, DEVNET.mint!, 5_000_000_000, PRICE * MARKET_TIMEOUT)
    assert.equal((await quotePost(net, wallet, DEVNET.market!, JOB_CID)).total, PRICE * MARKET_TIMEOUT)
  })

  it('exits 4 when the SOL covers the rents but not the fee as well, and passes with exactly both', async () => {
    const rent = jobRent + runRent
    fundWallet(rpc, owner.publicKey, DEVNET.mint!, Number(rent + 15_000n - 1n), 1_000_000_000n)
    const error = await refusal(quotePost(net, wallet, DEVNET.market!, JOB_CID))
    assert.equal(error.exitCode, 4)
    assert.equal(error.fields!.lamportsNeeded, String(rent + 15_000n))
    fundWallet(rpc, owner.publicKey, DEVNET.mint!, Number(rent + 15_000n), 1_000_000_000n)
    assert.equal((await quotePost(net, wallet, DEVNET.market!, JOB_CID)).rent, rent)
  })

  it('exits 4 when the SOL does not cover the rents alone, before simulating', async () => {
    fundWallet(rpc, owner.publicKey, DEVNET.mint!, Number(jobRent + runRent - 1n), 1_000_000_000n)
    const error = await refusal(quotePost(net, wallet, DEVNET.market!, JOB_CID))
    assert.equal(error.exitCode, 4)
    assert.equal(error.fields!.lamportsNeeded, String(jobRent + runRent))
    assert.ok(!rpc.requests.some((r) => r.method === 'simulateTransaction'))
  })

  it('exits 7 for a market address that holds no market', async () => {
    const error = await refusal(quotePost(net, wallet, Keypair.generate().publicKey, JOB_CID))
    assert.equal(error.code, 'market_not_found')
    assert.equal(error.exitCode, 7)
  })

  it("makes the token account of an owner off the curve (a program's address) at its associated address", () => {
    const [pda] = PublicKey.findProgramAddressSync([Buffer.from('owner')], DEVNET.programId)
    const ix = ataInstruction(net, pda, owner.publicKey)
    const [expected] = PublicKey.findProgramAddressSync(
      [pda.toBuffer(), TOKEN_PROGRAM_ID.toBuffer(), DEVNET.mint!.toBuffer()],
      new PublicKey(ATA_PROGRAM),
    )
    assert.deepEqual(
      ix.keys.slice(0, 3).map((k) => k.pubkey.toBase58()),
      [owner.publicKey.toBase58(), expected.toBase58(), pda.toBase58()],
    )
  })

  it('exits 2 with no content store configured, before asking the RPC node anything', async () => {
    const bare = marketNetwork(
      resolveSettings({
        network: 'devnet',
        flags: {rpcUrl: rpc.url},
        env: {XDG_CONFIG_HOME: '/nonexistent-gpunet-config'},
      }),
    )
    const error = await refusal(quotePost(bare, wallet, DEVNET.market!, JOB_CID))
    assert.equal(error.code, 'content_store_missing')
    assert.equal(error.exitCode, 2)
    assert.equal(rpc.requests.length, 0)
  })
})
