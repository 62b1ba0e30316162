import {strict as assert} from 'node:assert'
import {createHash} from 'node:crypto'
import {readFileSync} from 'node:fs'

import {Keypair, PublicKey} from '@solana/web3.js'

import {
  accountDiscriminator,
  bytesToIpfsHash,
  decodeJobAccount,
  decodeJobsInstructionData,
  decodeMarketAccount,
  decodeRunAccount,
  encodeJobAccount,
  encodeListInstruction,
  encodeMarketAccount,
  encodeRunAccount,
  instructionAccountSpecs,
  instructionDiscriminator,
  ipfsHashToBytes,
  JOB_ACCOUNT_DATA_SIZE,
  JOB_ACCOUNT_SIZE,
  JobState,
  type JobsInstructionName,
  MARKET_ACCOUNT_DATA_SIZE,
  MARKET_ACCOUNT_SIZE,
  NETWORK_PRESETS,
  QueueType,
  RUN_ACCOUNT_DATA_SIZE,
  RUN_ACCOUNT_SIZE,
} from '../../../src/lib/market/index.js'

interface Idl {
  instructions: {
    name: string
    accounts: {name: string; isMut: boolean; isSigner: boolean}[]
    args: {name: string; type: unknown}[]
  }[]
  accounts: {name: string; type: {fields: {name: string; type: unknown}[]}}[]
}
const idl = JSON.parse(
  readFileSync(new URL('../../../src/lib/localnet/jobs-program/idl.json', import.meta.url), 'utf8'),
) as Idl
const key = () => Keypair.generate().publicKey

describe('market codecs', () => {
  it('computes Anchor discriminators as the reference states', () => {
    assert.deepEqual([...instructionDiscriminator('list')], [54, 174, 193, 67, 17, 41, 132, 38])
    assert.deepEqual(
      accountDiscriminator('JobAccount'),
      createHash('sha256').update('account:JobAccount').digest().subarray(0, 8),
    )
    // camelCase IDL names hash as their snake_case Rust names
    assert.deepEqual(
      instructionDiscriminator('closeAdmin'),
      createHash('sha256').update('global:close_admin').digest().subarray(0, 8),
    )
  })

  it("lays out every instruction's accounts and flags exactly as the IDL, finish as the deployed program", () => {
    // The IDL's finish (payerJob, payerRun, project) predates the deployed program (payer_run, payer_job).
    const deployedFinish = ['job', 'run', 'market', 'vault', 'deposit', 'user', 'payerRun', 'payerJob', 'authority']
    for (const ix of idl.instructions) {
      const specs = instructionAccountSpecs(ix.name as JobsInstructionName)
      const expected =
        ix.name === 'finish'
          ? [...deployedFinish, 'tokenProgram'].map((name) => ix.accounts.find((a) => a.name === name)!)
          : ix.accounts
      assert.deepEqual(
        specs.map(([name, mut, signer]) => ({name, isMut: mut, isSigner: signer})),
        expected.map(({name, isMut, isSigner}) => ({name, isMut, isSigner})),
        ix.name,
      )
    }
  })

  it('sizes accounts from the IDL field types', () => {
    const sizes: Record<string, number> = {publicKey: 32, i64: 8, u64: 8, u8: 1, u128: 16}
    const size = (name: string) =>
      8 +
      idl.accounts
        .find((a) => a.name === name)!
        .type.fields.reduce((sum, f) => {
          if (typeof f.type === 'string') return sum + sizes[f.type]!
          if ((f.type as {array?: unknown}).array) return sum + 32
          return sum + 4 // the queue's u32 length; its capacity is reserved after it
        }, 0)
    assert.equal(JOB_ACCOUNT_DATA_SIZE, size('jobAccount'))
    assert.equal(RUN_ACCOUNT_DATA_SIZE, size('runAccount'))
    assert.equal(MARKET_ACCOUNT_DATA_SIZE, size('marketAccount'))
  })

  it('allocates accounts as the deployed program does: 240, 120 and 10,224 bytes (struct alignment, not Borsh)', () => {
    assert.equal(JOB_ACCOUNT_SIZE, 240)
    assert.equal(RUN_ACCOUNT_SIZE, 120)
    assert.equal(MARKET_ACCOUNT_SIZE, 10_224)
  })

  it('encodes a JobAccount in field order and decodes it back', () => {
    const job = {
      ipfsJob: new Uint8Array(32).fill(7),
      ipfsResult: new Uint8Array(32),
      market: key(),
      node: PublicKey.default,
      payer: key(),
      price: 100n,
      project: key(),
      state: JobState.QUEUED,
      timeEnd: 0n,
      timeStart: -5n,
      timeout: 7200n,
    }
    const bytes = encodeJobAccount(job)
    assert.equal(bytes.length, JOB_ACCOUNT_SIZE)
    assert.deepEqual(bytes.subarray(0, 8), accountDiscriminator('JobAccount'))
    assert.deepEqual(bytes.subarray(8, 40), Buffer.alloc(32, 7))
    assert.deepEqual(bytes.subarray(72, 104), job.market.toBuffer())
    assert.equal(bytes.readBigUInt64LE(168), 100n) // price, after ipfsJob, ipfsResult, market, node, payer
    assert.equal(bytes[8 + 32 * 5 + 8 + 32], JobState.QUEUED)
    assert.deepEqual(decodeJobAccount(bytes), job)
  })

  it('round-trips MarketAccount (with its queue) and RunAccount', () => {
    const market = {
      authority: key(),
      jobExpiration: 86_400n,
      jobPrice: 100n,
      jobTimeout: 7200n,
      jobType: 0,
      vault: key(),
      vaultBump: 254,
      nodeAccessKey: PublicKey.default,
      nodeXnosMinimum: (1n << 100n) + 3n,
      queueType: QueueType.JOB,
      queue: [key(), key()],
    }
    const bytes = encodeMarketAccount(market)
    assert.equal(bytes.length, MARKET_ACCOUNT_SIZE)
    assert.deepEqual(decodeMarketAccount(bytes), market)
    const run = {job: key(), node: key(), payer: key(), state: 0, time: 1_700_000_000n}
    assert.deepEqual(decodeRunAccount(encodeRunAccount(run)), run)
  })

  it('refuses to decode one account type as another', () => {
    const run = encodeRunAccount({job: key(), node: key(), payer: key(), state: 0, time: 0n})
    assert.throws(() => decodeJobAccount(run), /not a JobAccount/)
  })

  it("builds a list instruction in the IDL's account order and decodes its arguments", () => {
    const accounts = {
      job: key(),
      market: key(),
      run: key(),
      user: key(),
      vault: key(),
      payer: key(),
      rewardsReflection: key(),
      rewardsVault: key(),
      authority: key(),
      rewardsProgram: key(),
      tokenProgram: key(),
      systemProgram: key(),
    }
    const ipfsJob = ipfsHashToBytes('QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o')
    const ix = encodeListInstruction(NETWORK_PRESETS.mainnet.programId, accounts, {ipfsJob, timeout: 3600n})
    assert.deepEqual(
      ix.keys.map((k) => k.pubkey),
      Object.values(accounts),
    )
    assert.deepEqual([ix.keys[0]!.isSigner, ix.keys[0]!.isWritable], [true, true]) // job
    assert.deepEqual([ix.keys[8]!.isSigner, ix.keys[8]!.isWritable], [true, false]) // authority
    assert.equal(ix.data.length, 8 + 32 + 8)
    assert.deepEqual(decodeJobsInstructionData(ix.data), {name: 'list', args: {ipfsJob, timeout: 3600n}})
    assert.equal(decodeJobsInstructionData(Buffer.alloc(8)), null)
  })

  it('converts a CIDv0 to the 32 bytes a job stores and back', () => {
    const cid = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o'
    const bytes = ipfsHashToBytes(cid)
    assert.equal(bytes.length, 32)
    assert.equal(bytesToIpfsHash(bytes), cid)
    assert.throws(() => ipfsHashToBytes('bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi'), /not a CIDv0/)
  })

  it('has the reference program ids and mints for devnet and mainnet', () => {
    assert.equal(NETWORK_PRESETS.mainnet.programId.toBase58(), 'nosJhNRqr2bc9g1nfGDcXXTXvYUmxD4cVwy2pMWhrYM')
    assert.equal(NETWORK_PRESETS.devnet.programId.toBase58(), 'nosJTmGQxvwXy23vng5UjkTbfv91Bzf9jEuro78dAGR')
    assert.equal(NETWORK_PRESETS.devnet.mint?.toBase58(), 'devr1BGQndEW5k5zfvG5FsLyZv1Ap73vNgAHcQ9sUVP')
    assert.equal(NETWORK_PRESETS.mainnet.market?.toBase58(), '7nxXoihx65yRGZiGzWZsFMz8D7qwxFePNKvDBWZnxc41')
  })
})
