/**
 * The localnet's jobs program against reference/jobs-program-constraints.md, table-driven: for each instruction,
 * a transaction that keeps every rule succeeds (with the effects the reference states), and for every rule of
 * the reference a transaction that breaks only that rule is refused with the program's error (number, name and
 * message in the logs) and changes nothing.
 */
import {strict as assert} from 'node:assert'

import {
  createMint,
  getAccount,
  getAssociatedTokenAddressSync,
  getOrCreateAssociatedTokenAccount,
  mintTo,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token'
import {
  ComputeBudgetProgram,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  SYSVAR_RENT_PUBKEY,
  type TransactionInstruction,
} from '@solana/web3.js'

import {
  AnchorError,
  JobsError,
  NosanaError,
  type ProgramError,
  StakingError,
} from '../../../src/lib/localnet/jobs-program/errors.js'
import {REWARDS_PROGRAM_ID} from '../../../src/lib/localnet/jobs-program/context.js'
import {
  findMetadataAddress,
  REFLECTION_ACCOUNT_DISCRIMINATOR,
  REFLECTION_ACCOUNT_SPACE,
} from '../../../src/lib/localnet/jobs-program/foreign.js'
import {localnetFiles} from '../../../src/lib/localnet/paths.js'
import {localnetRewardsAccounts} from '../../../src/lib/localnet/rewards.js'
import {
  accountDiscriminator,
  decodeJobAccount,
  decodeMarketAccount,
  decodeRunAccount,
  findStakeAddress,
  findVaultAddress,
  instructionAccountSpecs,
  ipfsHashToBytes,
  type JobsInstructionName,
  jobsInstruction,
  JobState,
  QueueType,
  RUN_ACCOUNT_DISCRIMINATOR,
} from '../../../src/lib/market/index.js'
import {signedTransaction, signingKeys} from '../../../src/lib/market/rpc/sign.js'
import {generateKeypair, readKeypair} from '../../../src/lib/keys/wallet.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {rpc} from '../../helpers/json-rpc.js'
import {JOB_CID} from '../../helpers/market.js'

const RESULT = 'Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD'
const PRICE = 100n
const ZERO32 = new Uint8Array(32)

/** What a refused transaction must carry: a program error, a runtime error name, or a called program's code. */
type Expected = ProgramError | string | {cpi: number}

interface Party {
  kp: Keypair
  key: PublicKey
  /** Its associated token account of the localnet's mint. */
  ata: PublicKey
}

interface Market {
  key: PublicKey
  vault: PublicKey
  authority: Party
}

/** An instruction about to be sent, with its signers; `set` changes one named account. */
interface Attempt {
  ix: TransactionInstruction
  signers: Keypair[]
}

describe('localnet jobs program: the deployed program rules', function () {
  this.timeout(120_000)
  const t = useLocalnet()
  let faucet: Keypair
  let unique = 0

  before(() => {
    faucet = readKeypair(localnetFiles(t.dataDir).faucet)
  })

  // ---------------------------------------------------------------------------------------------------------
  // Sending and expectations

  async function send(attempt: Attempt) {
    const required = new Set(attempt.ix.keys.filter((k) => k.isSigner).map((k) => k.pubkey.toBase58()))
    const feePayer = attempt.signers[0]!
    required.add(feePayer.publicKey.toBase58())
    // Signed with node:crypto (web3.js signs and re-verifies in JavaScript, most of this suite's time).
    const raw = signedTransaction(
      feePayer.publicKey,
      t.ln.node.chain.latestBlockhash().blockhash,
      [ComputeBudgetProgram.setComputeUnitLimit({units: 200_000 + unique++}), attempt.ix],
      signingKeys(attempt.signers.filter((s) => required.has(s.publicKey.toBase58()))),
    )
    return rpc(t.ln.runtime.rpcUrl, 'sendTransaction', [raw.toString('base64'), {encoding: 'base64'}])
  }

  async function ok(attempt: Attempt): Promise<void> {
    const answer = await send(attempt)
    assert.equal(answer.error, undefined, JSON.stringify(answer.error))
  }

  async function refused(attempt: Attempt, expected: Expected): Promise<void> {
    const touched = attempt.ix.keys.map((k) => k.pubkey)
    const before = touched.map((k) => t.ln.node.chain.account(k))
    const answer = await send(attempt)
    assert.equal(answer.error?.code, -32002, JSON.stringify(answer))
    const {err, logs} = answer.error!.data!
    if (typeof expected === 'string') {
      assert.deepEqual(err, {InstructionError: [1, expected]})
    } else if ('cpi' in expected) {
      assert.deepEqual(err, {InstructionError: [1, {Custom: expected.cpi}]})
    } else {
      assert.deepEqual(err, {InstructionError: [1, {Custom: expected.code}]}, logs.join('\n'))
      const line = `Error Code: ${expected.name}. Error Number: ${expected.code}. Error Message: ${expected.message}.`
      assert.ok(
        logs.some((l) => l.includes(line)),
        `logs name the error ${expected.name}:\n${logs.join('\n')}`,
      )
    }
    const after = touched.map((k) => t.ln.node.chain.account(k))
    assert.deepEqual(after, before, 'a refused transaction changes nothing')
  }

  /** Replaces the account passed under `name` (and/or its flags). */
  function set(
    attempt: Attempt,
    name: string,
    key?: PublicKey,
    flags: {signer?: boolean; writable?: boolean} = {},
  ): Attempt {
    const ixName = nameOf(attempt.ix)
    const index = instructionAccountSpecs(ixName).findIndex(([account]) => account === name)
    assert.ok(index >= 0, `${ixName} has no account ${name}`)
    const meta = attempt.ix.keys[index]!
    if (key) meta.pubkey = key
    if (flags.signer !== undefined) meta.isSigner = flags.signer
    if (flags.writable !== undefined) meta.isWritable = flags.writable
    return attempt
  }

  const names = new Map<string, JobsInstructionName>()
  function nameOf(ix: TransactionInstruction): JobsInstructionName {
    return names.get(ix.data.subarray(0, 8).toString('hex'))!
  }

  function ix<N extends JobsInstructionName>(
    name: N,
    accounts: Parameters<typeof jobsInstruction<N>>[2],
    args: Parameters<typeof jobsInstruction<N>>[3],
    signers: Keypair[],
  ): Attempt {
    const built = jobsInstruction(t.programId, name, accounts, args)
    names.set(built.data.subarray(0, 8).toString('hex'), name)
    return {ix: built, signers}
  }

  // ---------------------------------------------------------------------------------------------------------
  // World

  function party(tokens = 10_000_000n): Party {
    const kp = Keypair.generate()
    t.ln.node.fund(kp.publicKey, {lamports: BigInt(10 * LAMPORTS_PER_SOL), tokens})
    t.ln.node.stake(kp.publicKey)
    return {kp, key: kp.publicKey, ata: getAssociatedTokenAddressSync(t.mint, kp.publicKey, true)}
  }

  const rewards = () => localnetRewardsAccounts(t.mint)

  function openIx(
    authority: Party,
    market: Keypair,
    args: Partial<Parameters<typeof jobsInstruction<'open'>>[3]> = {},
  ) {
    return ix(
      'open',
      {
        mint: t.mint,
        market: market.publicKey,
        vault: findVaultAddress(t.programId, market.publicKey, t.mint)[0],
        authority: authority.key,
        accessKey: SystemProgram.programId,
        rent: SYSVAR_RENT_PUBKEY,
        systemProgram: SystemProgram.programId,
        tokenProgram: TOKEN_PROGRAM_ID,
      },
      {jobExpiration: 86_400n, jobPrice: PRICE, jobTimeout: 7200n, jobType: 0, nodeXnosMinimum: 0n, ...args},
      [authority.kp, market],
    )
  }

  /** A market of its own for each case, so no case sees another's queue. */
  async function market(
    args: Partial<Parameters<typeof jobsInstruction<'open'>>[3]> = {},
    accessKey?: PublicKey,
  ): Promise<Market> {
    const authority = party()
    const keypair = Keypair.generate()
    const attempt = openIx(authority, keypair, args)
    if (accessKey) set(attempt, 'accessKey', accessKey)
    await ok(attempt)
    return {key: keypair.publicKey, vault: findVaultAddress(t.programId, keypair.publicKey, t.mint)[0], authority}
  }

  function listIx(
    m: Market,
    poster: Party,
    job = Keypair.generate(),
    run = Keypair.generate(),
    timeout = 3600n,
    project = poster,
  ) {
    return ix(
      'list',
      {
        job: job.publicKey,
        market: m.key,
        run: run.publicKey,
        user: poster.ata,
        vault: m.vault,
        payer: poster.key,
        ...rewards(),
        authority: project.key,
        tokenProgram: TOKEN_PROGRAM_ID,
        systemProgram: SystemProgram.programId,
      },
      {ipfsJob: ipfsHashToBytes(JOB_CID), timeout},
      [poster.kp, job, run, project.kp],
    )
  }

  function workIx(m: Market, node: Party, run = Keypair.generate()) {
    return ix(
      'work',
      {
        run: run.publicKey,
        market: m.key,
        payer: node.key,
        stake: findStakeAddress(t.mint, node.key),
        nft: node.ata,
        metadata: SystemProgram.programId,
        authority: node.key,
        systemProgram: SystemProgram.programId,
      },
      {},
      [node.kp, run],
    )
  }

  async function listed(m: Market, poster = party(), timeout = 3600n) {
    const job = Keypair.generate()
    await ok(listIx(m, poster, job, Keypair.generate(), timeout))
    return {job: job.publicKey, poster}
  }

  /** A job running on a node: listed, then taken with `work`. */
  async function running(m: Market, timeout = 3600n) {
    const {job, poster} = await listed(m, party(), timeout)
    const node = party(1n)
    const run = Keypair.generate()
    await ok(workIx(m, node, run))
    return {job, poster, node, run: run.publicKey}
  }

  function finishIx(m: Market, r: Awaited<ReturnType<typeof running>>, result = ipfsHashToBytes(RESULT)) {
    return ix(
      'finish',
      {
        job: r.job,
        run: r.run,
        market: m.key,
        vault: m.vault,
        deposit: r.poster.ata,
        user: r.node.ata,
        payerRun: r.node.key,
        payerJob: r.poster.key,
        authority: r.node.key,
        tokenProgram: TOKEN_PROGRAM_ID,
      },
      {ipfsResult: result},
      [r.node.kp],
    )
  }

  function endIx(m: Market, r: Awaited<ReturnType<typeof running>>) {
    return ix(
      'end',
      {
        job: r.job,
        market: m.key,
        run: r.run,
        deposit: r.poster.ata,
        user: r.node.ata,
        vault: m.vault,
        payer: r.node.key,
        authority: r.poster.key,
        tokenProgram: TOKEN_PROGRAM_ID,
      },
      {},
      [r.poster.kp],
    )
  }

  function quitIx(r: Awaited<ReturnType<typeof running>>) {
    return ix('quit', {job: r.job, run: r.run, payer: r.node.key, authority: r.node.key}, {}, [r.node.kp])
  }

  async function stopped(m: Market) {
    const r = await running(m)
    await ok(quitIx(r))
    return r
  }

  function claimIx(m: Market, job: PublicKey, node: Party, run = Keypair.generate()) {
    return ix(
      'claim',
      {
        job,
        run: run.publicKey,
        market: m.key,
        stake: findStakeAddress(t.mint, node.key),
        nft: node.ata,
        metadata: SystemProgram.programId,
        payer: node.key,
        authority: node.key,
        systemProgram: SystemProgram.programId,
      },
      {},
      [node.kp, run],
    )
  }

  const account = (key: PublicKey) => t.ln.node.chain.account(key)
  const job = (key: PublicKey) => decodeJobAccount(account(key)!.data)
  const marketOf = (key: PublicKey) => decodeMarketAccount(account(key)!.data)
  const tokens = async (key: PublicKey) => (await getAccount(t.connection, key)).amount
  const runsOf = (jobKey: PublicKey) =>
    t.ln.node.chain
      .programAccounts(t.programId)
      .filter(
        ({account: a}) =>
          RUN_ACCOUNT_DISCRIMINATOR.equals(a.data.subarray(0, 8)) && decodeRunAccount(a.data).job.equals(jobKey),
      )
      .map(({pubkey, account: a}) => ({pubkey, size: a.data.length, ...decodeRunAccount(a.data)}))

  /** A token account of another mint, for the mint checks. */
  async function otherMintAccount(owner: Party): Promise<PublicKey> {
    const mint = await createMint(t.connection, owner.kp, owner.key, null, 0)
    return (await getOrCreateAssociatedTokenAccount(t.connection, owner.kp, mint, owner.key)).address
  }

  // ---------------------------------------------------------------------------------------------------------
  // The table

  interface Rule {
    rule: string
    error: Expected
    /** Breaks exactly this rule (the setup keeps every other). */
    attempt: () => Promise<Attempt>
  }

  function rules(instruction: string, table: Rule[], keeps: () => Promise<void>): void {
    describe(instruction, () => {
      for (const {rule, error, attempt} of table) {
        const label = typeof error === 'string' ? error : 'cpi' in error ? `custom ${error.cpi}` : error.name
        it(`refuses: ${rule} -> ${label}`, async () => refused(await attempt(), error))
      }
      it('keeps every rule: succeeds with the effects of the reference', keeps)
    })
  }

  rules(
    'open',
    [
      {
        rule: 'mint is not the program token',
        error: NosanaError.InvalidMint,
        attempt: async () => {
          const authority = party()
          const mint = await createMint(t.connection, authority.kp, authority.key, null, 6)
          const m = Keypair.generate()
          const attempt = openIx(authority, m)
          set(attempt, 'mint', mint)
          return set(attempt, 'vault', findVaultAddress(t.programId, m.publicKey, mint)[0])
        },
      },
      {
        rule: 'vault is not the PDA [market, mint]',
        error: AnchorError.ConstraintSeeds,
        attempt: async () => set(openIx(party(), Keypair.generate()), 'vault', Keypair.generate().publicKey),
      },
      {
        // The market's creation (System CPI, paid by the authority) comes before the `mut` check.
        rule: 'authority not writable',
        error: 'PrivilegeEscalation',
        attempt: async () => {
          const authority = party()
          const m = Keypair.generate()
          // Another fee payer, so the authority can be read-only in the transaction.
          const attempt = openIx(authority, m)
          attempt.signers.unshift(party().kp)
          return set(attempt, 'authority', undefined, {writable: false})
        },
      },
      {
        rule: 'rent is not the Rent sysvar',
        error: AnchorError.AccountSysvarMismatch,
        attempt: async () => set(openIx(party(), Keypair.generate()), 'rent', SystemProgram.programId),
      },
      {
        rule: 'system program is another account',
        error: AnchorError.InvalidProgramId,
        attempt: async () => set(openIx(party(), Keypair.generate()), 'systemProgram', TOKEN_PROGRAM_ID),
      },
      {
        rule: 'token program is not SPL Token',
        error: AnchorError.InvalidProgramId,
        attempt: async () => set(openIx(party(), Keypair.generate()), 'tokenProgram', SystemProgram.programId),
      },
      {
        rule: 'authority does not sign',
        error: AnchorError.AccountNotSigner,
        attempt: async () => {
          const attempt = openIx(party(), Keypair.generate())
          attempt.signers.unshift(party().kp)
          return set(attempt, 'authority', undefined, {signer: false})
        },
      },
      {
        rule: 'an account is missing',
        error: AnchorError.AccountNotEnoughKeys,
        attempt: async () => {
          const attempt = openIx(party(), Keypair.generate())
          attempt.ix.keys.pop()
          return attempt
        },
      },
      {
        rule: 'arguments cut short',
        error: AnchorError.InstructionDidNotDeserialize,
        attempt: async () => {
          const attempt = openIx(party(), Keypair.generate())
          attempt.ix.data = attempt.ix.data.subarray(0, 20)
          return attempt
        },
      },
      {
        rule: 'unknown instruction discriminator',
        error: AnchorError.InstructionFallbackNotFound,
        attempt: async () => {
          const attempt = openIx(party(), Keypair.generate())
          attempt.ix.data = Buffer.concat([Buffer.alloc(8, 7), attempt.ix.data.subarray(8)])
          return attempt
        },
      },
      {
        rule: 'market account already in use',
        error: {cpi: 0},
        attempt: async () => {
          const authority = party()
          const m = Keypair.generate()
          await ok(openIx(authority, m))
          return openIx(authority, m)
        },
      },
    ],
    async () => {
      const authority = party()
      const m = Keypair.generate()
      await ok(openIx(authority, m, {jobType: 9}))
      const info = account(m.publicKey)!
      assert.equal(info.data.length, 10_224, 'allocated as on chain: 8 + 168 + 314 x 32')
      assert.equal(info.lamports, t.ln.node.chain.rentExempt(10_224))
      assert.deepEqual(info.data.subarray(0, 8), accountDiscriminator('MarketAccount'))
      const decoded = marketOf(m.publicKey)
      assert.equal(decoded.jobType, 255, 'an unknown job type is stored as 255')
      assert.equal(decoded.queueType, QueueType.EMPTY)
      assert.ok(decoded.authority.equals(authority.key))
      const vault = await getAccount(t.connection, decoded.vault)
      assert.ok(vault.mint.equals(t.mint) && vault.owner.equals(decoded.vault))
    },
  )

  function updateIx(m: Market, signer: Party, jobType = 7) {
    return ix(
      'update',
      {market: m.key, accessKey: SystemProgram.programId, authority: signer.key},
      {jobExpiration: 10n, jobPrice: 5n, jobType, nodeStakeMinimum: 3n, jobTimeout: 60n},
      [signer.kp],
    )
  }

  rules(
    'update',
    [
      {
        rule: 'signer is not the market authority',
        error: NosanaError.Unauthorized,
        attempt: async () => updateIx(await market(), party()),
      },
      {
        rule: 'market not writable',
        error: AnchorError.ConstraintMut,
        attempt: async () => {
          const m = await market()
          return set(updateIx(m, m.authority), 'market', undefined, {writable: false})
        },
      },
      {
        rule: 'market is a job account',
        error: AnchorError.AccountDiscriminatorMismatch,
        attempt: async () => {
          const m = await market()
          return set(updateIx(m, m.authority), 'market', (await listed(m)).job)
        },
      },
      {
        rule: 'market is owned by another program',
        error: AnchorError.AccountOwnedByWrongProgram,
        attempt: async () => {
          const m = await market()
          return set(updateIx(m, m.authority), 'market', m.vault)
        },
      },
      {
        rule: 'market does not exist',
        error: AnchorError.AccountNotInitialized,
        attempt: async () => {
          const m = await market()
          return set(updateIx(m, m.authority), 'market', Keypair.generate().publicKey)
        },
      },
    ],
    async () => {
      const m = await market()
      await ok(updateIx(m, m.authority))
      const decoded = marketOf(m.key)
      assert.equal(decoded.jobType, 7, 'update stores the job type as given')
      assert.equal(decoded.jobPrice, 5n)
      assert.equal(decoded.nodeXnosMinimum, 3n)
    },
  )

  function closeIx(m: Market, signer: Party | Keypair, user: PublicKey, admin = false) {
    const kp = signer instanceof Keypair ? signer : signer.kp
    return ix(
      admin ? 'closeAdmin' : 'close',
      {market: m.key, vault: m.vault, user, authority: kp.publicKey, tokenProgram: TOKEN_PROGRAM_ID},
      {},
      [kp],
    )
  }

  rules(
    'close',
    [
      {
        rule: 'signer is not the market authority',
        error: NosanaError.Unauthorized,
        attempt: async () => {
          const stranger = party()
          return closeIx(await market(), stranger, stranger.ata)
        },
      },
      {
        rule: 'vault is not the market vault',
        error: NosanaError.InvalidVault,
        attempt: async () => {
          const m = await market()
          const other = await market()
          return set(closeIx(m, m.authority, m.authority.ata), 'vault', other.vault)
        },
      },
      {
        rule: 'user is the vault (duplicate mutable account)',
        error: AnchorError.ConstraintDuplicateMutableAccount,
        attempt: async () => {
          const m = await market()
          return closeIx(m, m.authority, m.vault)
        },
      },
      {
        rule: 'user not writable',
        error: AnchorError.ConstraintMut,
        attempt: async () => {
          const m = await market()
          return set(closeIx(m, m.authority, m.authority.ata), 'user', undefined, {writable: false})
        },
      },
    ],
    async () => {
      const m = await market()
      await listed(m)
      const before = await tokens(m.authority.ata)
      await ok(closeIx(m, m.authority, m.authority.ata))
      assert.equal(await tokens(m.authority.ata), before + PRICE * 3600n, 'the whole vault goes to user')
      assert.equal(account(m.key), null)
      assert.equal(account(m.vault), null)
    },
  )

  rules(
    'closeAdmin',
    [
      {
        rule: 'signer is not the market admin',
        error: NosanaError.Unauthorized,
        attempt: async () => {
          const m = await market()
          return closeIx(m, m.authority, m.authority.ata, true)
        },
      },
      {
        rule: 'vault is not the market vault',
        error: NosanaError.InvalidVault,
        attempt: async () => {
          const m = await market()
          const other = await market()
          t.ln.node.fund(faucet.publicKey, {tokens: 1n})
          const attempt = closeIx(m, faucet, getAssociatedTokenAddressSync(t.mint, faucet.publicKey, true), true)
          return set(attempt, 'vault', other.vault)
        },
      },
    ],
    async () => {
      const m = await market()
      await ok(closeIx(m, faucet, m.authority.ata, true))
      assert.equal(account(m.key), null)
    },
  )

  rules(
    'list',
    [
      {
        rule: 'vault is not the market vault',
        error: NosanaError.InvalidVault,
        attempt: async () => set(listIx(await market(), party()), 'vault', (await market()).vault),
      },
      {
        rule: 'run does not sign',
        error: NosanaError.MissingSignature,
        attempt: async () => set(listIx(await market(), party()), 'run', undefined, {signer: false}),
      },
      {
        rule: 'run holds lamports',
        error: NosanaError.LamportsNonNull,
        attempt: async () => {
          const run = Keypair.generate()
          t.ln.node.fund(run.publicKey, {lamports: 1_000_000n})
          return listIx(await market(), party(), Keypair.generate(), run)
        },
      },
      {
        rule: 'run not writable',
        error: AnchorError.ConstraintMut,
        attempt: async () => set(listIx(await market(), party()), 'run', undefined, {writable: false}),
      },
      {
        rule: "user is not the payer's associated token account",
        error: NosanaError.InvalidATA,
        attempt: async () => set(listIx(await market(), party()), 'user', party().ata),
      },
      {
        // Signer and writable flags belong to an account, not a position: the payer must be another key.
        rule: 'payer does not sign',
        error: AnchorError.AccountNotSigner,
        attempt: async () => {
          const project = party()
          const attempt = listIx(await market(), party(), Keypair.generate(), Keypair.generate(), 3600n, project)
          attempt.signers.unshift(project.kp)
          return set(attempt, 'payer', undefined, {signer: false})
        },
      },
      {
        rule: 'authority (project) does not sign',
        error: AnchorError.AccountNotSigner,
        attempt: async () => {
          const poster = party()
          const attempt = listIx(await market(), poster)
          return set(attempt, 'authority', party().key, {signer: false})
        },
      },
      {
        rule: 'rewards reflection does not exist',
        error: AnchorError.AccountNotInitialized,
        attempt: async () => set(listIx(await market(), party()), 'rewardsReflection', Keypair.generate().publicKey),
      },
      {
        rule: 'rewards reflection is owned by another program',
        error: AnchorError.AccountOwnedByWrongProgram,
        attempt: async () => set(listIx(await market(), party()), 'rewardsReflection', party().ata),
      },
      {
        rule: 'rewards program is another program',
        error: AnchorError.InvalidProgramId,
        attempt: async () => set(listIx(await market(), party()), 'rewardsProgram', SystemProgram.programId),
      },
      {
        rule: 'user is the vault (duplicate mutable account)',
        error: AnchorError.ConstraintDuplicateMutableAccount,
        attempt: async () => {
          const m = await market({jobPrice: 0n})
          return set(listIx(m, party()), 'user', m.vault)
        },
      },
      {
        rule: 'job key already in use',
        error: {cpi: 0},
        attempt: async () => {
          const m = await market()
          const poster = party()
          const jobKey = Keypair.generate()
          await ok(listIx(m, poster, jobKey))
          return listIx(m, poster, jobKey)
        },
      },
      {
        rule: 'not enough tokens for the deposit',
        error: {cpi: 1},
        attempt: async () => listIx(await market(), party(PRICE * 3600n - 1n)),
      },
      {
        rule: 'negative timeout on a priced market (overflow checks panic)',
        error: 'ProgramFailedToComplete',
        attempt: async () => listIx(await market(), party(), Keypair.generate(), Keypair.generate(), -1n),
      },
      {
        rule: 'a deposit past u64 (price x timeout overflows: a panic)',
        error: 'ProgramFailedToComplete',
        attempt: async () =>
          listIx(await market({jobPrice: 2n ** 63n}), party(), Keypair.generate(), Keypair.generate(), 2n),
      },
      {
        // u64::MAX itself does not overflow: the transfer is what fails, for want of tokens.
        rule: 'a deposit of exactly u64::MAX the payer cannot pay',
        error: {cpi: 1},
        attempt: async () =>
          listIx(await market({jobPrice: 2n ** 64n - 1n}), party(), Keypair.generate(), Keypair.generate(), 1n),
      },
    ],
    async () => {
      const m = await market()
      const poster = party()
      const jobKey = Keypair.generate()
      await ok(listIx(m, poster, jobKey))
      const info = account(jobKey.publicKey)!
      assert.equal(info.data.length, 240, 'allocated as on chain: 8 + 232')
      assert.equal(info.lamports, t.ln.node.chain.rentExempt(240))
      assert.ok(
        info.data.subarray(8 + 225).every((b) => b === 0),
        'the 7 bytes past the Borsh content are zero',
      )
      const j = job(jobKey.publicKey)
      assert.equal(j.state, JobState.QUEUED)
      assert.equal(j.price, PRICE)
      assert.ok(j.payer.equals(poster.key) && j.project.equals(poster.key) && j.market.equals(m.key))
      assert.equal(await tokens(m.vault), PRICE * 3600n)
      assert.deepEqual(
        marketOf(m.key).queue.map((k) => k.toBase58()),
        [jobKey.publicKey.toBase58()],
      )
      // With a node waiting, `list` starts the job on it in the run account it was given (120 bytes).
      const node = party(1n)
      const again = await market()
      await ok(workIx(again, node))
      const second = Keypair.generate()
      const run = Keypair.generate()
      await ok(listIx(again, poster, second, run))
      const [started] = runsOf(second.publicKey)
      assert.ok(started && started.node.equals(node.key) && started.pubkey.equals(run.publicKey))
      assert.equal(started.size, 120, 'allocated as on chain: 8 + 112')
      assert.equal(marketOf(again.key).queueType, QueueType.EMPTY)
      // A market of job type 255 queues nothing.
      const unknown = await market({jobType: 200})
      await ok(listIx(unknown, poster))
      assert.deepEqual(marketOf(unknown.key).queue, [])
    },
  )

  function assignIx(m: Market, poster: Party, node: PublicKey) {
    const job = Keypair.generate()
    const run = Keypair.generate()
    return ix(
      'assign',
      {
        job: job.publicKey,
        market: m.key,
        run: run.publicKey,
        node,
        user: poster.ata,
        vault: m.vault,
        payer: poster.key,
        ...rewards(),
        authority: poster.key,
        tokenProgram: TOKEN_PROGRAM_ID,
        systemProgram: SystemProgram.programId,
      },
      {ipfsJob: ipfsHashToBytes(JOB_CID), timeout: 100n},
      [poster.kp, job, run],
    )
  }

  rules(
    'assign',
    [
      {
        rule: 'the market queue does not hold nodes',
        error: JobsError.MarketInWrongState,
        attempt: async () => assignIx(await market(), party(), party().key),
      },
      {
        rule: 'the node is not in the queue',
        error: JobsError.NotInMarketQueue,
        attempt: async () => {
          const m = await market()
          await ok(workIx(m, party(1n)))
          return assignIx(m, party(), party().key)
        },
      },
    ],
    async () => {
      const m = await market()
      const first = party(1n)
      const second = party(1n)
      await ok(workIx(m, first))
      await ok(workIx(m, second))
      const attempt = assignIx(m, party(), second.key)
      await ok(attempt)
      const jobKey = attempt.ix.keys[0]!.pubkey
      assert.ok(runsOf(jobKey)[0]?.node.equals(second.key), 'the named node, not the first in the queue')
      assert.deepEqual(
        marketOf(m.key).queue.map((k) => k.toBase58()),
        [first.key.toBase58()],
      )
    },
  )

  function delistIx(m: Market, jobKey: PublicKey, poster: Party, signer = poster) {
    return ix(
      'delist',
      {
        job: jobKey,
        market: m.key,
        deposit: poster.ata,
        payer: poster.key,
        vault: m.vault,
        tokenProgram: TOKEN_PROGRAM_ID,
        authority: signer.key,
      },
      {},
      [signer.kp],
    )
  }

  rules(
    'delist',
    [
      {
        rule: "payer is not the job's payer",
        error: NosanaError.InvalidPayer,
        attempt: async () => {
          const m = await market()
          const {job: j, poster} = await listed(m)
          return set(delistIx(m, j, poster), 'payer', party().key)
        },
      },
      {
        rule: "market is not the job's market",
        error: JobsError.InvalidMarketAccount,
        attempt: async () => {
          const m = await market()
          const {job: j, poster} = await listed(m)
          const other = await market()
          return set(set(delistIx(m, j, poster), 'market', other.key), 'vault', other.vault)
        },
      },
      {
        rule: "signer is not the job's project",
        error: NosanaError.Unauthorized,
        attempt: async () => {
          const m = await market()
          const {job: j, poster} = await listed(m)
          return delistIx(m, j, poster, party())
        },
      },
      {
        rule: 'the job is not queued (stopped)',
        error: JobsError.JobInWrongState,
        attempt: async () => {
          const m = await market()
          const r = await stopped(m)
          return delistIx(m, r.job, r.poster)
        },
      },
      {
        rule: 'the market queue does not hold jobs (the job was matched)',
        error: JobsError.MarketInWrongState,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          return delistIx(m, r.job, r.poster)
        },
      },
      {
        rule: 'the job is not in the queue',
        error: JobsError.NotInMarketQueue,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          await listed(m)
          return delistIx(m, r.job, r.poster)
        },
      },
      {
        rule: "deposit is not the payer's associated token account",
        error: NosanaError.InvalidATA,
        attempt: async () => {
          const m = await market()
          const {job: j, poster} = await listed(m)
          return set(delistIx(m, j, poster), 'deposit', party().ata)
        },
      },
      {
        rule: 'authority not writable',
        error: AnchorError.ConstraintMut,
        attempt: async () => {
          const m = await market()
          const poster = party()
          const project = party()
          const jobKey = Keypair.generate()
          await ok(listIx(m, poster, jobKey, Keypair.generate(), 3600n, project))
          const attempt = delistIx(m, jobKey.publicKey, poster, project)
          attempt.signers.unshift(party().kp)
          return set(attempt, 'authority', undefined, {writable: false})
        },
      },
    ],
    async () => {
      const m = await market()
      const {job: j, poster} = await listed(m)
      await ok(delistIx(m, j, poster))
      assert.equal(await tokens(poster.ata), 10_000_000n, 'the whole deposit comes back')
      assert.equal(account(j), null)
      assert.equal(marketOf(m.key).queueType, QueueType.EMPTY)
    },
  )

  function recoverIx(m: Market, r: Awaited<ReturnType<typeof running>>, signer = r.poster) {
    return ix(
      'recover',
      {
        job: r.job,
        market: m.key,
        vault: m.vault,
        user: r.poster.ata,
        payer: r.poster.key,
        authority: signer.key,
        tokenProgram: TOKEN_PROGRAM_ID,
      },
      {},
      [signer.kp],
    )
  }

  rules(
    'recover',
    [
      {
        rule: 'the job is not stopped',
        error: JobsError.JobInWrongState,
        attempt: async () => {
          const m = await market()
          return recoverIx(m, await running(m))
        },
      },
      {
        rule: "signer is not the job's project",
        error: NosanaError.Unauthorized,
        attempt: async () => {
          const m = await market()
          return recoverIx(m, await stopped(m), party())
        },
      },
      {
        rule: "payer is not the job's payer",
        error: NosanaError.InvalidPayer,
        attempt: async () => {
          const m = await market()
          return set(recoverIx(m, await stopped(m)), 'payer', party().key)
        },
      },
    ],
    async () => {
      const m = await market()
      const r = await stopped(m)
      await ok(recoverIx(m, r))
      assert.equal(await tokens(r.poster.ata), 10_000_000n)
      assert.equal(account(r.job), null)
    },
  )

  function extendIx(m: Market, jobKey: PublicKey, poster: Party, timeout: bigint, payer = poster) {
    return ix(
      'extend',
      {
        job: jobKey,
        market: m.key,
        user: payer.ata,
        vault: m.vault,
        ...rewards(),
        authority: poster.key,
        payer: payer.key,
        tokenProgram: TOKEN_PROGRAM_ID,
      },
      {timeout},
      [poster.kp, payer.kp],
    )
  }

  rules(
    'extend',
    [
      {
        rule: 'the new timeout is not larger',
        error: JobsError.JobTimeoutNotGreater,
        attempt: async () => {
          const m = await market()
          const {job: j, poster} = await listed(m)
          return extendIx(m, j, poster, 3600n)
        },
      },
      {
        rule: "payer is not the job's payer (priced job)",
        error: NosanaError.Unauthorized,
        attempt: async () => {
          const m = await market()
          const {job: j, poster} = await listed(m)
          return extendIx(m, j, poster, 4000n, party())
        },
      },
      {
        rule: "signer is not the job's project",
        error: NosanaError.Unauthorized,
        attempt: async () => {
          const m = await market()
          const {job: j} = await listed(m)
          const stranger = party()
          return extendIx(m, j, stranger, 4000n)
        },
      },
      {
        rule: 'the job is done',
        error: JobsError.JobInWrongState,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          await ok(finishIx(m, r))
          return extendIx(m, r.job, r.poster, 4000n)
        },
      },
      {
        rule: "user is not the payer's associated token account",
        error: NosanaError.InvalidATA,
        attempt: async () => {
          const m = await market()
          const {job: j, poster} = await listed(m)
          return set(extendIx(m, j, poster, 4000n), 'user', party().ata)
        },
      },
    ],
    async () => {
      const m = await market()
      const r = await running(m)
      await ok(extendIx(m, r.job, r.poster, 4000n))
      assert.equal(job(r.job).timeout, 4000n, 'a running job may be extended')
      assert.equal(await tokens(r.poster.ata), 10_000_000n - PRICE * 4000n)
    },
  )

  rules(
    'end',
    [
      {
        rule: "signer is not the job's project",
        error: NosanaError.Unauthorized,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          const stranger = party()
          return {...set(endIx(m, r), 'authority', stranger.key), signers: [stranger.kp]}
        },
      },
      {
        rule: "payer is not the run's payer",
        error: NosanaError.InvalidPayer,
        attempt: async () => {
          const m = await market()
          return set(endIx(m, await running(m)), 'payer', party().key)
        },
      },
      {
        rule: 'the run belongs to another job',
        error: JobsError.InvalidJobAccount,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          const other = await running(m)
          return set(set(endIx(m, r), 'run', other.run), 'payer', other.node.key)
        },
      },
      {
        rule: "user is not the node's associated token account",
        error: NosanaError.InvalidATA,
        attempt: async () => {
          const m = await market()
          return set(endIx(m, await running(m)), 'user', party().ata)
        },
      },
      {
        rule: "deposit is not the job payer's associated token account",
        error: NosanaError.InvalidATA,
        attempt: async () => {
          const m = await market()
          return set(endIx(m, await running(m)), 'deposit', party().ata)
        },
      },
      {
        rule: 'authority not writable',
        error: AnchorError.ConstraintMut,
        attempt: async () => {
          const m = await market()
          const attempt = endIx(m, await running(m))
          attempt.signers.unshift(party().kp)
          return set(attempt, 'authority', undefined, {writable: false})
        },
      },
      {
        rule: 'the run is closed (ended twice)',
        error: AnchorError.AccountNotInitialized,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          await ok(endIx(m, r))
          return endIx(m, r)
        },
      },
    ],
    async () => {
      const m = await market()
      const r = await running(m)
      await ok(endIx(m, r))
      const j = job(r.job)
      assert.equal(j.state, JobState.DONE, 'end settles the job as Done')
      assert.ok(j.node.equals(r.node.key))
      assert.deepEqual(j.ipfsResult, ZERO32, 'without a result, which `complete` may add')
      const paid = (await tokens(r.node.ata)) - 1n
      assert.equal(paid, PRICE * (j.timeEnd - j.timeStart))
      assert.equal((await tokens(r.poster.ata)) + paid, 10_000_000n)
      assert.deepEqual(runsOf(r.job), [])
    },
  )

  /** A market that admits only holders of an NFT of a verified collection. */
  async function gatedMarket() {
    const collection = Keypair.generate().publicKey
    const m = await market({}, collection)
    const node = party(1n)
    const nftMint = await createMint(t.connection, node.kp, node.key, null, 0)
    const nft = (await getOrCreateAssociatedTokenAccount(t.connection, node.kp, nftMint, node.key)).address
    await mintTo(t.connection, node.kp, nftMint, nft, node.kp, 1)
    return {m, node, nft, nftMint, collection}
  }

  /** MetadataV1 bytes with an optional collection. */
  function metadata(mint: PublicKey, collection: PublicKey | null, verified = true): Buffer {
    const parts = [
      Buffer.from([4]),
      Buffer.alloc(32),
      mint.toBuffer(),
      Buffer.alloc(12), // name, symbol, uri: empty strings
      Buffer.alloc(2), // seller fee
      Buffer.from([0, 0, 1, 0, 0]), // no creators, primary sale, mutable, no edition nonce, no token standard
      collection ? Buffer.concat([Buffer.from([1, verified ? 1 : 0]), collection.toBuffer()]) : Buffer.from([0]),
      Buffer.from([0]), // no uses
    ]
    return Buffer.concat(parts)
  }

  function writeMetadata(mint: PublicKey, data: Buffer): PublicKey {
    const address = findMetadataAddress(mint)
    t.ln.node.chain.setAccounts([
      [
        address,
        {lamports: t.ln.node.chain.rentExempt(data.length), owner: SystemProgram.programId, data, executable: false},
      ],
    ])
    return address
  }

  function gatedWork(g: Awaited<ReturnType<typeof gatedMarket>>, metadataKey: PublicKey, nft = g.nft) {
    return set(set(workIx(g.m, g.node), 'nft', nft), 'metadata', metadataKey)
  }

  rules(
    'work',
    [
      {
        rule: 'the node is already in the queue',
        error: JobsError.NodeAlreadyQueued,
        attempt: async () => {
          const m = await market()
          const node = party(1n)
          await ok(workIx(m, node))
          return workIx(m, node)
        },
      },
      {
        rule: 'run holds lamports',
        error: NosanaError.LamportsNonNull,
        attempt: async () => {
          const run = Keypair.generate()
          t.ln.node.fund(run.publicKey, {lamports: 1_000_000n})
          return workIx(await market(), party(1n), run)
        },
      },
      {
        rule: 'run does not sign',
        error: NosanaError.MissingSignature,
        attempt: async () => set(workIx(await market(), party(1n)), 'run', undefined, {signer: false}),
      },
      {
        rule: 'the node has no stake account',
        error: AnchorError.AccountNotInitialized,
        attempt: async () => {
          const node = party(1n)
          return set(workIx(await market(), node), 'stake', Keypair.generate().publicKey)
        },
      },
      {
        rule: "the stake is another node's",
        error: NosanaError.Unauthorized,
        attempt: async () => set(workIx(await market(), party(1n)), 'stake', findStakeAddress(t.mint, party().key)),
      },
      {
        rule: 'the stake is below the market minimum',
        error: JobsError.NodeNotEnoughStake,
        attempt: async () => workIx(await market({nodeXnosMinimum: 1000n}), party(1n)),
      },
      {
        rule: "the stake account is not the node's stake PDA",
        error: StakingError.InvalidStakeAccount,
        attempt: async () => {
          const node = party(1n)
          const elsewhere = Keypair.generate().publicKey
          const stake = account(findStakeAddress(t.mint, node.key))!
          t.ln.node.chain.setAccounts([[elsewhere, stake]])
          return set(workIx(await market(), node), 'stake', elsewhere)
        },
      },
      {
        rule: 'nft is not a token account (checked even without an access key)',
        error: AnchorError.AccountOwnedByWrongProgram,
        attempt: async () => {
          const m = await market()
          return set(workIx(m, party(1n)), 'nft', m.key)
        },
      },
      {
        rule: 'gated market: the NFT account is not the node’s',
        error: JobsError.NodeNftWrongOwner,
        attempt: async () => {
          const g = await gatedMarket()
          const metadataKey = writeMetadata(g.nftMint, metadata(g.nftMint, g.collection))
          return gatedWork(g, metadataKey, party().ata)
        },
      },
      {
        rule: 'gated market: the NFT account is empty',
        error: JobsError.NodeNftInvalidAmount,
        attempt: async () => {
          const g = await gatedMarket()
          const empty = await otherMintAccount(g.node)
          return gatedWork(g, writeMetadata(g.nftMint, metadata(g.nftMint, g.collection)), empty)
        },
      },
      {
        rule: 'gated market: the collection is not verified',
        error: JobsError.NodeKeyInvalidCollection,
        attempt: async () => {
          const g = await gatedMarket()
          return gatedWork(g, writeMetadata(g.nftMint, metadata(g.nftMint, g.collection, false)))
        },
      },
      {
        rule: 'gated market: another collection',
        error: JobsError.NodeKeyInvalidCollection,
        attempt: async () => {
          const g = await gatedMarket()
          return gatedWork(g, writeMetadata(g.nftMint, metadata(g.nftMint, Keypair.generate().publicKey)))
        },
      },
      {
        rule: "gated market: metadata is not the NFT mint's metadata PDA",
        error: JobsError.NodeKeyInvalidCollection,
        attempt: async () => {
          const g = await gatedMarket()
          writeMetadata(g.nftMint, metadata(g.nftMint, g.collection))
          return gatedWork(g, SystemProgram.programId)
        },
      },
    ],
    async () => {
      const m = await market()
      const node = party(1n)
      await ok(workIx(m, node))
      assert.equal(marketOf(m.key).queueType, QueueType.NODE)
      // With jobs queued, `work` takes the first (FIFO).
      const jobs = await market()
      const first = await listed(jobs)
      await listed(jobs)
      const run = Keypair.generate()
      await ok(workIx(jobs, party(1n), run))
      assert.ok(runsOf(first.job)[0]?.pubkey.equals(run.publicKey))
      // A gated market admits the holder of a verified collection's NFT.
      const g = await gatedMarket()
      await ok(gatedWork(g, writeMetadata(g.nftMint, metadata(g.nftMint, g.collection))))
      assert.ok(marketOf(g.m.key).queue[0]?.equals(g.node.key))
    },
  )

  function stopIx(m: Market, node: PublicKey, signer: Party) {
    return ix('stop', {market: m.key, node, authority: signer.key}, {}, [signer.kp])
  }

  rules(
    'stop',
    [
      {
        rule: 'the market queue does not hold nodes',
        error: JobsError.MarketInWrongState,
        attempt: async () => {
          const node = party()
          return stopIx(await market(), node.key, node)
        },
      },
      {
        rule: 'signer is neither the node nor the market authority',
        error: NosanaError.Unauthorized,
        attempt: async () => {
          const m = await market()
          const node = party(1n)
          await ok(workIx(m, node))
          return stopIx(m, node.key, party())
        },
      },
      {
        rule: 'the node is not in the queue',
        error: JobsError.NotInMarketQueue,
        attempt: async () => {
          const m = await market()
          await ok(workIx(m, party(1n)))
          const other = party()
          return stopIx(m, other.key, other)
        },
      },
    ],
    async () => {
      const m = await market()
      const a = party(1n)
      const b = party(1n)
      await ok(workIx(m, a))
      await ok(workIx(m, b))
      await ok(stopIx(m, a.key, a))
      await ok(stopIx(m, b.key, m.authority))
      assert.equal(marketOf(m.key).queueType, QueueType.EMPTY)
    },
  )

  rules(
    'claim',
    [
      {
        rule: 'the job is running, not stopped (the takeover attack)',
        error: JobsError.JobInWrongState,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          return claimIx(m, r.job, party(1n))
        },
      },
      {
        rule: 'the job is queued, not stopped',
        error: JobsError.JobInWrongState,
        attempt: async () => {
          const m = await market()
          return claimIx(m, (await listed(m)).job, party(1n))
        },
      },
      {
        rule: "market is not the job's market",
        error: JobsError.InvalidMarketAccount,
        attempt: async () => {
          const m = await market()
          const r = await stopped(m)
          return set(claimIx(m, r.job, party(1n)), 'market', (await market()).key)
        },
      },
      {
        rule: 'the stake is below the market minimum',
        error: JobsError.NodeNotEnoughStake,
        attempt: async () => {
          const m = await market({nodeXnosMinimum: 5n})
          t.ln.node.stake(m.authority.key, 5n)
          const poster = party()
          const jobKey = Keypair.generate()
          await ok(listIx(m, poster, jobKey))
          const staked = m.authority
          const run = Keypair.generate()
          await ok(workIx(m, staked, run))
          await ok(
            ix('quit', {job: jobKey.publicKey, run: run.publicKey, payer: staked.key, authority: staked.key}, {}, [
              staked.kp,
            ]),
          )
          return claimIx(m, jobKey.publicKey, party(1n))
        },
      },
      {
        rule: "gated market: the claimer's NFT is now of another collection",
        error: JobsError.NodeKeyInvalidCollection,
        attempt: async () => {
          const g = await gatedMarket()
          const jobKey = Keypair.generate()
          await ok(listIx(g.m, party(), jobKey))
          const run = Keypair.generate()
          const metadataKey = writeMetadata(g.nftMint, metadata(g.nftMint, g.collection))
          await ok(set(set(workIx(g.m, g.node, run), 'nft', g.nft), 'metadata', metadataKey))
          const quit = {job: jobKey.publicKey, run: run.publicKey, payer: g.node.key, authority: g.node.key}
          await ok(ix('quit', quit, {}, [g.node.kp]))
          writeMetadata(g.nftMint, metadata(g.nftMint, Keypair.generate().publicKey))
          return set(set(claimIx(g.m, jobKey.publicKey, g.node), 'nft', g.nft), 'metadata', metadataKey)
        },
      },
    ],
    async () => {
      const m = await market()
      const r = await stopped(m)
      const claimer = party(1n)
      const run = Keypair.generate()
      await ok(claimIx(m, r.job, claimer, run))
      assert.equal(job(r.job).state, JobState.STOPPED, 'claim leaves the job Stopped')
      const runs = runsOf(r.job)
      assert.ok(runs.some((x) => x.pubkey.equals(run.publicKey) && x.node.equals(claimer.key)))
      assert.equal(runs[0]!.size, 120)
    },
  )

  function completeIx(jobKey: PublicKey, signer: Party, result = ipfsHashToBytes(RESULT)) {
    return ix('complete', {job: jobKey, authority: signer.key}, {ipfsResult: result}, [signer.kp])
  }

  rules(
    'complete',
    [
      {
        rule: 'the job is not done',
        error: JobsError.JobInWrongState,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          return completeIx(r.job, r.node)
        },
      },
      {
        rule: "signer is not the job's node",
        error: NosanaError.Unauthorized,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          await ok(endIx(m, r))
          return completeIx(r.job, party())
        },
      },
      {
        rule: 'the result is already set (finished)',
        error: JobsError.JobResultsAlreadySet,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          await ok(finishIx(m, r))
          return completeIx(r.job, r.node)
        },
      },
      {
        rule: 'the result is empty',
        error: JobsError.JobResultNull,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          await ok(endIx(m, r))
          return completeIx(r.job, r.node, ZERO32)
        },
      },
    ],
    async () => {
      const m = await market()
      const r = await running(m)
      await ok(endIx(m, r))
      await ok(completeIx(r.job, r.node))
      assert.deepEqual(job(r.job).ipfsResult, ipfsHashToBytes(RESULT))
    },
  )

  rules(
    'finish',
    [
      {
        rule: "signer is not the run's node",
        error: NosanaError.Unauthorized,
        attempt: async () => {
          const m = await market()
          const stranger = party()
          return {...set(finishIx(m, await running(m)), 'authority', stranger.key), signers: [stranger.kp]}
        },
      },
      {
        rule: "payerJob is not the job's payer",
        error: NosanaError.InvalidPayer,
        attempt: async () => {
          const m = await market()
          return set(finishIx(m, await running(m)), 'payerJob', party().key)
        },
      },
      {
        rule: "payerRun is not the run's payer",
        error: NosanaError.InvalidPayer,
        attempt: async () => {
          const m = await market()
          return set(finishIx(m, await running(m)), 'payerRun', party().key)
        },
      },
      {
        rule: 'the run belongs to another job',
        error: JobsError.InvalidJobAccount,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          const other = await running(m)
          return set(finishIx(m, r), 'run', other.run)
        },
      },
      {
        rule: 'the result is empty',
        error: JobsError.JobResultNull,
        attempt: async () => {
          const m = await market()
          return finishIx(m, await running(m), ZERO32)
        },
      },
      {
        rule: "deposit is not the job payer's associated token account",
        error: NosanaError.InvalidATA,
        attempt: async () => {
          const m = await market()
          return set(finishIx(m, await running(m)), 'deposit', party().ata)
        },
      },
      {
        rule: 'user holds another token',
        error: NosanaError.InvalidATA,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          return set(finishIx(m, r), 'user', await otherMintAccount(r.node))
        },
      },
      {
        rule: 'vault is not the market vault',
        error: NosanaError.InvalidVault,
        attempt: async () => {
          const m = await market()
          return set(finishIx(m, await running(m)), 'vault', (await market()).vault)
        },
      },
      {
        rule: 'the run is closed (finished twice)',
        error: AnchorError.AccountNotInitialized,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          await ok(finishIx(m, r))
          return finishIx(m, r)
        },
      },
    ],
    async () => {
      const m = await market()
      const r = await running(m)
      const vaultBefore = await tokens(m.vault)
      await ok(finishIx(m, r))
      const j = job(r.job)
      assert.equal(j.state, JobState.DONE)
      assert.ok(j.node.equals(r.node.key))
      assert.deepEqual(j.ipfsResult, ipfsHashToBytes(RESULT))
      const earned = (await tokens(r.node.ata)) - 1n
      assert.equal(earned, PRICE * (j.timeEnd - j.timeStart))
      assert.equal((await tokens(r.poster.ata)) + earned, 10_000_000n)
      assert.equal(await tokens(m.vault), vaultBefore - PRICE * 3600n)
      assert.deepEqual(runsOf(r.job), [])
    },
  )

  rules(
    'quit',
    [
      {
        rule: "signer is not the run's node",
        error: NosanaError.Unauthorized,
        attempt: async () => {
          const m = await market()
          const stranger = party()
          return {...set(quitIx(await running(m)), 'authority', stranger.key), signers: [stranger.kp]}
        },
      },
      {
        rule: "payer is not the run's payer",
        error: NosanaError.InvalidPayer,
        attempt: async () => {
          const m = await market()
          return set(quitIx(await running(m)), 'payer', party().key)
        },
      },
      {
        rule: 'the run belongs to another job',
        error: JobsError.InvalidJobAccount,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          return set(quitIx(r), 'job', (await listed(m)).job)
        },
      },
    ],
    async () => {
      const m = await market()
      const r = await running(m)
      await ok(quitIx(r))
      assert.equal(job(r.job).state, JobState.STOPPED)
      assert.deepEqual(runsOf(r.job), [])
      assert.ok(!marketOf(m.key).queue.some((k) => k.equals(r.job)), 'not queued again')
    },
  )

  function adminIx(name: 'quitAdmin' | 'cleanAdmin', target: PublicKey, payer: PublicKey, signer: Keypair) {
    const accounts =
      name === 'quitAdmin'
        ? {run: target, payer, authority: signer.publicKey}
        : {job: target, payer, authority: signer.publicKey}
    return ix(name, accounts as never, {}, [signer])
  }

  rules(
    'quitAdmin',
    [
      {
        rule: 'signer is not the market admin',
        error: NosanaError.Unauthorized,
        attempt: async () => {
          const r = await running(await market())
          return adminIx('quitAdmin', r.run, r.node.key, party().kp)
        },
      },
      {
        rule: "payer is not the run's payer",
        error: NosanaError.InvalidPayer,
        attempt: async () => {
          const r = await running(await market())
          return adminIx('quitAdmin', r.run, party().key, faucet)
        },
      },
    ],
    async () => {
      const r = await running(await market())
      await ok(adminIx('quitAdmin', r.run, r.node.key, faucet))
      assert.deepEqual(runsOf(r.job), [])
      assert.equal(job(r.job).state, JobState.QUEUED, 'the job is left as it was')
    },
  )

  function cleanIx(jobKey: PublicKey, m: Market, payer: PublicKey) {
    return ix('clean', {job: jobKey, market: m.key, payer}, {}, [party().kp])
  }

  rules(
    'clean',
    [
      {
        rule: 'the job is not done',
        error: JobsError.JobInWrongState,
        attempt: async () => {
          const m = await market({jobExpiration: -1n})
          const {job: j, poster} = await listed(m)
          return cleanIx(j, m, poster.key)
        },
      },
      {
        rule: 'the job has not expired',
        error: JobsError.JobNotExpired,
        attempt: async () => {
          const m = await market()
          const r = await running(m)
          await ok(finishIx(m, r))
          return cleanIx(r.job, m, r.poster.key)
        },
      },
      {
        rule: "payer is not the job's payer",
        error: NosanaError.InvalidPayer,
        attempt: async () => {
          const m = await market({jobExpiration: -1n})
          const r = await running(m)
          await ok(finishIx(m, r))
          return cleanIx(r.job, m, party().key)
        },
      },
    ],
    async () => {
      const m = await market()
      const r = await running(m)
      await ok(finishIx(m, r))
      // Any market supplies the expiration: one whose window is already over.
      const expired = await market({jobExpiration: -1n})
      await ok(cleanIx(r.job, expired, r.poster.key))
      assert.equal(account(r.job), null)
    },
  )

  rules(
    'cleanAdmin',
    [
      {
        rule: 'signer is not the market admin',
        error: NosanaError.Unauthorized,
        attempt: async () => {
          const {job: j, poster} = await listed(await market())
          return adminIx('cleanAdmin', j, poster.key, party().kp)
        },
      },
      {
        rule: "payer is not the job's payer",
        error: NosanaError.InvalidPayer,
        attempt: async () => {
          const {job: j} = await listed(await market())
          return adminIx('cleanAdmin', j, party().key, faucet)
        },
      },
    ],
    async () => {
      const m = await market()
      const {job: j, poster} = await listed(m)
      await ok(adminIx('cleanAdmin', j, poster.key, faucet))
      assert.equal(account(j), null)
      assert.ok(
        marketOf(m.key).queue.some((k) => k.equals(j)),
        'its key stays in the queue',
      )
    },
  )

  // Checks a mutation audit (issue 26) found no test for: each breaks one rule of an instruction whose other rules
  // have their tests above.
  describe('more rules', () => {
    const otherVault = async () => (await market()).vault
    const cases: Rule[] = [
      {
        rule: 'assign: user is not the payer’s ATA',
        error: NosanaError.InvalidATA,
        attempt: async () => {
          const m = await market()
          const node = party(1n)
          await ok(workIx(m, node))
          return set(assignIx(m, party(), node.key), 'user', party().ata)
        },
      },
      {
        rule: 'recover: vault is not the market vault',
        error: NosanaError.InvalidVault,
        attempt: async () => {
          const m = await market()
          return set(recoverIx(m, await stopped(m)), 'vault', await otherVault())
        },
      },
      {
        rule: 'extend: vault is not the market vault',
        error: NosanaError.InvalidVault,
        attempt: async () => {
          const m = await market()
          const {job, poster} = await listed(m)
          return set(extendIx(m, job, poster, 7200n), 'vault', await otherVault())
        },
      },
      {
        rule: 'end: vault is not the market vault',
        error: NosanaError.InvalidVault,
        attempt: async () => {
          const m = await market()
          return set(endIx(m, await running(m)), 'vault', await otherVault())
        },
      },
      {
        // The payer holds lamports, so `init` would take it over as the job: Anchor refuses before any System call.
        rule: 'list: job is the payer',
        error: AnchorError.TryingToInitPayerAsProgramAccount,
        attempt: async () => {
          const poster = party()
          return set(listIx(await market(), poster), 'job', poster.key)
        },
      },
    ]
    for (const {rule, error, attempt} of cases) {
      const label = typeof error === 'string' ? error : 'cpi' in error ? `custom ${error.cpi}` : error.name
      it(`refuses: ${rule} -> ${label}`, async () => refused(await attempt(), error))
    }

    it('end and finish take the same account as deposit and user (dup), paying it both parts', async () => {
      for (const build of [endIx, finishIx] as const) {
        // The poster runs its own job, so its account is both the deposit's and the node's.
        const m = await market()
        const poster = party()
        const {job} = await listed(m, poster)
        const run = Keypair.generate()
        await ok(workIx(m, poster, run))
        const before = await tokens(poster.ata)
        await ok(build(m, {job, poster, node: poster, run: run.publicKey}))
        assert.equal(await tokens(poster.ata), before + PRICE * 3600n, 'the whole deposit, paid and refunded')
      }
    })

    it('keeps a job queue typed while a job is left in it, after a delist and after a node takes the first', async () => {
      const m = await market()
      const a = await listed(m)
      await listed(m)
      const c = await listed(m)
      await ok(delistIx(m, a.job, a.poster))
      assert.deepEqual([marketOf(m.key).queueType, marketOf(m.key).queue.length], [QueueType.JOB, 2])
      await ok(workIx(m, party(1n)))
      assert.equal(marketOf(m.key).queueType, QueueType.JOB)
      assert.deepEqual(
        marketOf(m.key).queue.map((k) => k.toBase58()),
        [c.job.toBase58()],
        'the first job in the queue was taken',
      )
    })
  })

  describe('loading accounts as Anchor does', () => {
    /** Puts an account of `owner` holding `data` at a fresh address. */
    function put(owner: PublicKey, data: Buffer): PublicKey {
      const key = Keypair.generate().publicKey
      const lamports = t.ln.node.chain.rentExempt(data.length)
      t.ln.node.chain.setAccounts([[key, {lamports, owner, data, executable: false}]])
      return key
    }

    it('takes a token account initialized or frozen only, at its size', async () => {
      const m = await market()
      const poster = party()
      const good = account(poster.ata)!.data
      const withState = (state: number) =>
        Buffer.concat([good.subarray(0, 108), Buffer.from([state]), good.subarray(109)])
      await refused(set(listIx(m, poster), 'user', put(TOKEN_PROGRAM_ID, withState(0))), 'UninitializedAccount')
      await refused(set(listIx(m, poster), 'user', put(TOKEN_PROGRAM_ID, withState(3))), 'InvalidAccountData')
      await refused(set(listIx(m, poster), 'user', put(TOKEN_PROGRAM_ID, good.subarray(0, 164))), 'InvalidAccountData')
      // Frozen (2) loads: the transfer is what refuses it, with the token program's code.
      t.ln.node.chain.setAccounts([[poster.ata, {...account(poster.ata)!, data: withState(2)}]])
      await refused(listIx(m, poster), {cpi: 17})
    })

    it('logs which token account did not load, and why', async () => {
      const m = await market()
      const poster = party()
      const good = account(poster.ata)!.data
      const withState = (state: number) =>
        Buffer.concat([good.subarray(0, 108), Buffer.from([state]), good.subarray(109)])
      const logged = async (data: Buffer) =>
        (await send(set(listIx(m, poster), 'user', put(TOKEN_PROGRAM_ID, data)))).error!.data!.logs as string[]
      assert.ok((await logged(withState(0))).includes('Program log: user: not initialized'))
      assert.ok((await logged(withState(3))).includes('Program log: user: invalid token account state'))
      assert.ok((await logged(good.subarray(0, 164))).includes('Program log: user: not an SPL token account'))
    })

    it('logs which mint did not load, and why', async () => {
      const mint = account(t.mint)!.data
      const uninitialized = Buffer.from(mint)
      uninitialized[45] = 0
      const logged = async (data: Buffer) =>
        (await send(set(openIx(party(), Keypair.generate()), 'mint', put(TOKEN_PROGRAM_ID, data)))).error!.data!
          .logs as string[]
      assert.ok((await logged(uninitialized)).includes('Program log: mint: not initialized'))
      assert.ok(
        (await logged(Buffer.concat([mint, Buffer.alloc(1)]))).includes('Program log: mint: not an SPL token mint'),
      )
    })

    it('takes a mint initialized only, at its size', async () => {
      const mint = account(t.mint)!.data
      const uninitialized = Buffer.from(mint)
      uninitialized[45] = 0 // is_initialized, after the mint authority option, key, supply and decimals
      const open = (key: PublicKey) => set(openIx(party(), Keypair.generate()), 'mint', key)
      await refused(open(put(TOKEN_PROGRAM_ID, uninitialized)), 'UninitializedAccount')
      await refused(open(put(TOKEN_PROGRAM_ID, Buffer.concat([mint, Buffer.alloc(1)]))), 'InvalidAccountData')
    })

    it("refuses a program account shorter than a discriminator (3001) apart from one that is another's (3002)", async () => {
      const m = await market()
      const {job, poster} = await listed(m)
      const short = put(t.programId, Buffer.alloc(7))
      await refused(set(extendIx(m, job, poster, 7200n), 'job', short), AnchorError.AccountDiscriminatorNotFound)
      const other = put(t.programId, Buffer.alloc(8))
      await refused(set(extendIx(m, job, poster, 7200n), 'job', other), AnchorError.AccountDiscriminatorMismatch)
    })

    it('refuses a rewards reflection one byte short of its size (3003)', async () => {
      const data = Buffer.concat([REFLECTION_ACCOUNT_DISCRIMINATOR, Buffer.alloc(REFLECTION_ACCOUNT_SPACE - 9)])
      assert.equal(REFLECTION_ACCOUNT_SPACE, 89, 'discriminator, three u128s, a vault key and its bump')
      const m = await market()
      await refused(
        set(listIx(m, party()), 'rewardsReflection', put(REWARDS_PROGRAM_ID, data)),
        AnchorError.AccountDidNotDeserialize,
      )
    })
  })

  // Anchor's exit serializes a program account over its data from the start (reference 2.1 and 3.2, phase 7).
  describe('writing accounts back at exit', () => {
    it('leaves the bytes past the content as they were: a key removed from the queue stays behind it', async () => {
      const m = await market()
      const first = await listed(m)
      const second = await listed(m)
      await ok(delistIx(m, first.job, first.poster))
      assert.deepEqual(
        marketOf(m.key).queue.map((k) => k.toBase58()),
        [second.job.toBase58()],
      )
      // The queue's second slot (after its u32 length at 147 and the first key at 151) still holds the second job.
      assert.deepEqual(account(m.key)!.data.subarray(151 + 32, 151 + 64), second.job.toBuffer())
    })

    it('writes back an account whose data is exactly as long as its content', async () => {
      const m = await market()
      // A market with an empty queue is 151 bytes of Borsh: cut its data there.
      t.ln.node.chain.setAccounts([[m.key, {...account(m.key)!, data: account(m.key)!.data.subarray(0, 151)}]])
      await ok(updateIx(m, m.authority))
      assert.equal(account(m.key)!.data.length, 151)
      assert.equal(marketOf(m.key).jobPrice, 5n)
    })
  })

  describe('error logs', () => {
    it("name the account as the program's Rust source does (snake_case), and say when none caused it", async () => {
      const m = await market()
      const answer = await send(set(listIx(m, party()), 'rewardsReflection', party().ata))
      const logs = answer.error!.data!.logs as string[]
      // The instruction's name as Anchor logs it first: capitalized, camelCase kept.
      assert.ok(logs.includes('Program log: Instruction: List'), logs.join('\n'))
      const {code, name, message} = AnchorError.AccountOwnedByWrongProgram
      assert.ok(
        logs.includes(
          `Program log: AnchorError caused by account: rewards_reflection. Error Code: ${name}. Error Number: ${code}. Error Message: ${message}.`,
        ),
        logs.join('\n'),
      )
      // A handler's own failure (no account caused it): "AnchorError occurred."
      const {job, poster} = await listed(m)
      const extended = await send(extendIx(m, job, poster, 1n))
      const timeout = JobsError.JobTimeoutNotGreater
      assert.ok(
        (extended.error!.data!.logs as string[]).includes(
          `Program log: AnchorError occurred. Error Code: ${timeout.name}. Error Number: ${timeout.code}. Error Message: ${timeout.message}.`,
        ),
      )
    })
  })

  // A mutation audit (issue 26) found no test of a free market past `list`: every price check had survivors.
  describe('a free market (price 0): nothing moves, so any token account will do', () => {
    it('keeps job type 4 (the last known one), and lists, extends and delists with accounts that are not the ATAs', async () => {
      const m = await market({jobPrice: 0n, jobType: 4})
      assert.equal(marketOf(m.key).jobType, 4)
      const [poster, payer, third] = [party(), party(), party()]
      const balances = async () => Promise.all([poster, payer, third].map((p) => tokens(p.ata)))
      const before = await balances()
      const jobKey = Keypair.generate()
      // The user is not ATA(payer), and not even the payer's: at price 0 no transfer checks its owner.
      await ok(set(listIx(m, poster, jobKey), 'user', third.ata))
      // Another payer than the job's, and a user account that is not its.
      await ok(set(extendIx(m, jobKey.publicKey, poster, 7200n, payer), 'user', third.ata))
      assert.equal(job(jobKey.publicKey).timeout, 7200n)
      await ok(set(delistIx(m, jobKey.publicKey, poster), 'deposit', third.ata))
      assert.deepEqual(await balances(), before)
    })

    it('ends and finishes runs with any deposit and user accounts, paying nobody', async () => {
      const m = await market({jobPrice: 0n})
      const third = party()
      const before = await tokens(third.ata)
      const ended = await running(m)
      await ok(set(set(endIx(m, ended), 'deposit', third.ata), 'user', third.ata))
      const finished = await running(m)
      // The user may even hold another token: at price 0 its mint is not checked.
      await ok(set(set(finishIx(m, finished), 'deposit', third.ata), 'user', await otherMintAccount(finished.node)))
      for (const r of [ended, finished]) assert.equal(job(r.job).state, JobState.DONE)
      assert.equal(await tokens(third.ata), before)
      assert.equal(await tokens(m.vault), 0n)
    })

    it('delists a job listed with a negative timeout: at price 0 no deposit is computed, so nothing panics', async () => {
      const m = await market({jobPrice: 0n})
      const {job: j, poster} = await listed(m, party(), -1n)
      await ok(delistIx(m, j, poster))
      assert.equal(account(j), null, 'the job is closed')
      assert.deepEqual(marketOf(m.key).queue, [])
    })
  })

  describe('market queue capacity', () => {
    it('holds 314 keys; the 315th append fails at exit (AccountDidNotSerialize) and is rolled back', async () => {
      const m = await market({jobPrice: 0n})
      const poster = party()
      for (let i = 0; i < 314; i++) {
        const jobKey = generateKeypair()
        const run = generateKeypair()
        const raw = signedTransaction(
          poster.key,
          t.ln.node.chain.latestBlockhash().blockhash,
          [listIx(m, poster, jobKey, run).ix],
          signingKeys([poster.kp, jobKey, run]),
        )
        const outcome = t.ln.node.chain.send(raw)
        assert.ok(outcome.kind === 'landed' && !outcome.execution.err, JSON.stringify(outcome))
      }
      assert.equal(marketOf(m.key).queue.length, 314)
      await refused(listIx(m, poster), AnchorError.AccountDidNotSerialize)
    })
  })

  // A mutation audit (issue 26) found no test settling a run that outlasted its job's timeout.
  describe('settling a run past its timeout', () => {
    it('pays the node for the timeout only, not the whole elapsed time (finish and end)', async () => {
      const m = await market()
      const finished = await running(m, 1n)
      const ended = await running(m, 1n)
      // Fixed: the chain counts whole seconds of this machine's clock; 2.1 s outlasts the 1-s timeout.
      await new Promise((resolve) => setTimeout(resolve, 2100))
      await ok(finishIx(m, finished))
      await ok(endIx(m, ended))
      for (const r of [finished, ended]) {
        const j = job(r.job)
        assert.ok(j.timeEnd - j.timeStart > j.timeout, 'the run outlasted its timeout')
        assert.equal((await tokens(r.node.ata)) - 1n, PRICE * 1n, 'the node is paid for the timeout only')
        assert.equal(await tokens(r.poster.ata), 10_000_000n - PRICE * 1n, 'nothing is refunded: the timeout was used')
      }
    })
  })

  // A mutation audit of the handlers' helpers (issue 26) found no test of these: the panic messages, an i64 overflow,
  // a result with zero bytes, an ungated market's nft, and a payer that is a program address.
  describe('handler helpers', () => {
    /** Sends `attempt` and expects the runtime's panic, logged with `message`. */
    async function panicked(attempt: Attempt, message: string): Promise<void> {
      const answer = await send(attempt)
      const {err, logs} = answer.error!.data!
      assert.deepEqual(err, {InstructionError: [1, 'ProgramFailedToComplete']})
      assert.ok((logs as string[]).includes(`Program log: Program panicked: ${message}`), logs.join('\n'))
    }

    it('logs the panic of a negative timeout on a priced market: the timeout is out of range', async () => {
      await panicked(
        listIx(await market(), party(), Keypair.generate(), Keypair.generate(), -1n),
        'timeout out of range',
      )
    })

    it('logs the panic of a deposit past u64: the deposit is out of range', async () => {
      const m = await market({jobPrice: 2n ** 63n})
      await panicked(listIx(m, party(), Keypair.generate(), Keypair.generate(), 2n), 'deposit out of range')
    })

    it('panics extending a job by more than i64::MAX seconds (i64::MIN to 0), logging the overflow', async () => {
      // A free market takes any timeout, negative ones too.
      const m = await market({jobPrice: 0n})
      const {job: j, poster} = await listed(m, party(), -(2n ** 63n))
      await panicked(extendIx(m, j, poster, 0n), 'timeout delta overflowed')
      assert.equal(job(j).timeout, -(2n ** 63n))
    })

    it('logs the panic of an extension whose extra deposit is past u64: the extra deposit is out of range', async () => {
      // 3 tokens a second for one second is a small deposit; 3 × (i64::MAX − 1) more seconds is past u64::MAX.
      const m = await market({jobPrice: 3n})
      const {job: j, poster} = await listed(m, party(), 1n)
      await panicked(extendIx(m, j, poster, 2n ** 63n - 1n), 'extra deposit out of range')
      assert.equal(job(j).timeout, 1n)
    })

    it('extends a job by exactly i64::MAX seconds (0 to i64::MAX): no overflow', async () => {
      const m = await market({jobPrice: 0n})
      const {job: j, poster} = await listed(m, party(), 0n)
      await ok(extendIx(m, j, poster, 2n ** 63n - 1n))
      assert.equal(job(j).timeout, 2n ** 63n - 1n)
    })

    it('logs the panic of a run settled before the time it started (a clock stepped back): billed time out of range', async () => {
      const m = await market()
      const r = await running(m)
      const data = Buffer.from(account(r.run)!.data)
      data.writeBigInt64LE(BigInt(Math.floor(Date.now() / 1000)) + 1000n, 105) // run.time
      t.ln.node.chain.setAccounts([[r.run, {...account(r.run)!, data}]])
      await panicked(endIx(m, r), 'billed time out of range')
    })

    it('finishes with a result holding zero bytes, as long as not every byte is zero', async () => {
      const m = await market()
      const r = await running(m)
      const result = new Uint8Array(32)
      result[31] = 1
      await ok(finishIx(m, r, result))
      assert.deepEqual(Buffer.from(job(r.job).ipfsResult), Buffer.from(result))
    })

    it("takes another owner's token account as nft when the market gates no nodes", async () => {
      const m = await market()
      const node = party(1n)
      await ok(set(workIx(m, node), 'nft', party().ata))
      assert.deepEqual(
        marketOf(m.key).queue.map((k) => k.toBase58()),
        [node.key.toBase58()],
      )
    })

    it('delists a job whose payer is a program address (a CPI signer), refunding its associated token account', async () => {
      const m = await market()
      const {job: j, poster} = await listed(m)
      // A program listing through a CPI signs as payer with an address off the curve: rewrite the job's payer to one.
      const [pda] = PublicKey.findProgramAddressSync([Buffer.from('escrow')], Keypair.generate().publicKey)
      t.ln.node.fund(pda, {tokens: 1n})
      const pdaAta = getAssociatedTokenAddressSync(t.mint, pda, true)
      const data = Buffer.from(account(j)!.data)
      pda.toBuffer().copy(data, 136) // job.payer
      t.ln.node.chain.setAccounts([[j, {...account(j)!, data}]])
      await ok(set(set(delistIx(m, j, poster), 'payer', pda), 'deposit', pdaAta))
      assert.equal(await tokens(pdaAta), 1n + PRICE * 3600n)
    })
  })
})
