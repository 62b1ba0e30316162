/**
 * The localnet jobs program's context alone (issue 26, jobs-program survivors): the runtime's rules on accounts
 * (read-only accounts keep their balance and data, system calls need signers) and the system and SPL token effects
 * it performs as CPIs, each failure with the code and message the real programs give. The ledger under it is a
 * map; jobs-program.test.ts runs the same code through transactions on a localnet. A few instructions run here over
 * the map too, for states a localnet cannot hold (a program account that is not executable, a market at the admin's
 * address).
 */
import {strict as assert} from 'node:assert'

import {ACCOUNT_SIZE, AccountLayout, AccountState as TokenState, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {Keypair, PublicKey, SystemProgram} from '@solana/web3.js'

import type {AccountState, Overlay} from '../../../src/lib/localnet/chain/ledger.js'
import {type InstructionAccount, JobsContext} from '../../../src/lib/localnet/jobs-program/context.js'
import {AnchorError, fail, InstructionFailure, JobsError} from '../../../src/lib/localnet/jobs-program/errors.js'
import {executeJobsInstruction} from '../../../src/lib/localnet/jobs-program/execute.js'
import {
  encodeJobAccount,
  encodeMarketAccount,
  JobState,
  jobsInstruction,
  type MarketAccount,
  QueueType,
} from '../../../src/lib/market/index.js'

const MINT = Keypair.generate().publicKey
const RENT = (space: number) => BigInt((128 + space) * 6960)

/** A map standing in for litesvm under the overlay: what the context reads and writes. */
function ledger(): Overlay & {accounts: Map<string, AccountState>} {
  const accounts = new Map<string, AccountState>()
  return {
    accounts,
    get: (key: PublicKey) => accounts.get(key.toBase58()) ?? null,
    set: (key: PublicKey, state: AccountState | null) => {
      if (state && state.lamports > 0n) accounts.set(key.toBase58(), state)
      else accounts.delete(key.toBase58())
    },
  } as unknown as Overlay & {accounts: Map<string, AccountState>}
}

function tokenAccount(owner: PublicKey, amount: bigint, options: {mint?: PublicKey; state?: TokenState} = {}) {
  const data = Buffer.alloc(ACCOUNT_SIZE)
  AccountLayout.encode(
    {
      mint: options.mint ?? MINT,
      owner,
      amount,
      delegateOption: 0,
      delegate: PublicKey.default,
      state: options.state ?? TokenState.Initialized,
      isNativeOption: 0,
      isNative: 0n,
      delegatedAmount: 0n,
      closeAuthorityOption: 0,
      closeAuthority: PublicKey.default,
    },
    data,
  )
  return {lamports: RENT(ACCOUNT_SIZE), owner: TOKEN_PROGRAM_ID, data, executable: false}
}

const systemAccount = (lamports: bigint): AccountState => ({
  lamports,
  owner: SystemProgram.programId,
  data: Buffer.alloc(0),
  executable: false,
})
const meta = (pubkey: PublicKey, isSigner = false, isWritable = true): InstructionAccount => ({
  pubkey,
  isSigner,
  isWritable,
})

/** A context over `accounts`, with every one of `writable` writable and the rest read-only. */
function context(accounts: [PublicKey, AccountState][], writable: PublicKey[]) {
  const l = ledger()
  for (const [key, state] of accounts) l.set(key, state)
  const logs: string[] = []
  const ids = {programId: Keypair.generate().publicKey, tokenMint: MINT, marketAdmin: PublicKey.default}
  const all = [...accounts.map(([key]) => key), ...writable].map((key) =>
    meta(
      key,
      false,
      writable.some((w) => w.equals(key)),
    ),
  )
  const ctx = new JobsContext(
    ids,
    l,
    new Map(),
    all,
    1_700_000_000n,
    (space) => RENT(space),
    (line) => logs.push(line),
  )
  return {ctx, l, logs}
}

/** The failure `run` throws: its error (custom code or runtime error name), message and logs. */
function failure(run: () => void): {error: unknown; message: string; logs: string[]} {
  try {
    run()
  } catch (error) {
    assert.ok(error instanceof InstructionFailure, String(error))
    return {error: error.error, message: error.message, logs: error.logs}
  }
  assert.fail('expected the instruction to fail')
}

const amountOf = (l: ReturnType<typeof ledger>, key: PublicKey) => AccountLayout.decode(l.get(key)!.data).amount

describe('localnet jobs program context', () => {
  const [alice, bob] = [Keypair.generate().publicKey, Keypair.generate().publicKey]
  const [from, to] = [Keypair.generate().publicKey, Keypair.generate().publicKey]

  describe('SPL token transfer', () => {
    it('moves the amount and logs the token program call', () => {
      const {ctx, l, logs} = context(
        [
          [from, tokenAccount(alice, 10n)],
          [to, tokenAccount(bob, 1n)],
        ],
        [from, to],
      )
      ctx.transferTokens(from, to, alice, 4n)
      assert.deepEqual([amountOf(l, from), amountOf(l, to)], [6n, 5n])
      assert.deepEqual(logs, [
        `Program ${TOKEN_PROGRAM_ID.toBase58()} invoke [2]`,
        'Program log: Instruction: Transfer',
        `Program ${TOKEN_PROGRAM_ID.toBase58()} success`,
      ])
    })

    it('moves nothing for 0, nor to the account itself, yet checks and logs as the program does', () => {
      const {ctx, l, logs} = context(
        [
          [from, tokenAccount(alice, 10n)],
          [to, tokenAccount(bob, 1n)],
        ],
        [],
      )
      // Read-only accounts: a write would fail, so none happens.
      ctx.transferTokens(from, to, alice, 0n)
      ctx.transferTokens(from, from, alice, 7n)
      assert.deepEqual([amountOf(l, from), amountOf(l, to)], [10n, 1n])
      assert.equal(logs.length, 6)
      assert.deepEqual(failure(() => ctx.transferTokens(from, to, bob, 0n)).error, {Custom: 4}, 'the owner even for 0')
    })

    it('refuses a frozen source or destination (17), another mint (3), another owner (4), too little (1)', () => {
      const frozen = tokenAccount(alice, 10n, {state: TokenState.Frozen})
      const cases: [string, [PublicKey, AccountState][], PublicKey, bigint, number, string][] = [
        [
          'frozen source',
          [
            [from, frozen],
            [to, tokenAccount(bob, 0n)],
          ],
          alice,
          1n,
          17,
          'Account is frozen',
        ],
        [
          'frozen destination',
          [
            [from, tokenAccount(alice, 10n)],
            [to, tokenAccount(bob, 0n, {state: TokenState.Frozen})],
          ],
          alice,
          1n,
          17,
          'Account is frozen',
        ],
        [
          'another mint',
          [
            [from, tokenAccount(alice, 10n)],
            [to, tokenAccount(bob, 0n, {mint: Keypair.generate().publicKey})],
          ],
          alice,
          1n,
          3,
          'Account not associated with this Mint',
        ],
        [
          'another owner',
          [
            [from, tokenAccount(alice, 10n)],
            [to, tokenAccount(bob, 0n)],
          ],
          bob,
          1n,
          4,
          'owner does not match',
        ],
        [
          'too little',
          [
            [from, tokenAccount(alice, 10n)],
            [to, tokenAccount(bob, 0n)],
          ],
          alice,
          11n,
          1,
          'insufficient funds',
        ],
      ]
      for (const [what, accounts, authority, amount, code, message] of cases) {
        const {ctx, l} = context(accounts, [from, to])
        const refused = failure(() => ctx.transferTokens(from, to, authority, amount))
        // Logged as the token program logs its errors: once "Error: ", then the message.
        assert.deepEqual(refused, {error: {Custom: code}, message, logs: [`Program log: Error: ${message}`]}, what)
        assert.equal(amountOf(l, from), AccountLayout.decode(accounts[0]![1].data).amount, `${what}: nothing moved`)
      }
    })

    it('refuses an account that is no initialized token account: InvalidAccountData', () => {
      const uninitialized = tokenAccount(bob, 0n, {state: TokenState.Uninitialized})
      for (const destination of [uninitialized, systemAccount(5n)]) {
        const {ctx} = context(
          [
            [from, tokenAccount(alice, 10n)],
            [to, destination],
          ],
          [from, to],
        )
        assert.equal(ctx.tokenAccount(to), null)
        assert.deepEqual(
          failure(() => ctx.transferTokens(from, to, alice, 1n)),
          {
            error: 'InvalidAccountData',
            message: 'Transfer: not an SPL token account',
            logs: ['Program log: Transfer: not an SPL token account'],
          },
        )
      }
    })

    it('refuses a token-program account of another size than 165 bytes: InvalidAccountData', () => {
      const long = tokenAccount(bob, 0n)
      const {ctx} = context(
        [
          [from, tokenAccount(alice, 10n)],
          [to, {...long, data: Buffer.concat([long.data, Buffer.alloc(1)])}],
        ],
        [from, to],
      )
      assert.equal(ctx.tokenAccount(to), null)
      assert.equal(failure(() => ctx.transferTokens(from, to, alice, 1n)).error, 'InvalidAccountData')
    })

    it("refuses to close a token account holding tokens with the token program's message", () => {
      const {ctx} = context(
        [
          [from, tokenAccount(alice, 1n)],
          [to, systemAccount(5n)],
        ],
        [from, to],
      )
      const message = 'Non-native account can only be closed if its balance is zero'
      assert.deepEqual(
        failure(() => ctx.closeTokenAccount(from, to)),
        {
          error: {Custom: 11},
          message,
          logs: [`Program log: Error: ${message}`],
        },
      )
    })

    it('closes only an empty token account (11), its lamports to the destination', () => {
      const {ctx, l} = context(
        [
          [from, tokenAccount(alice, 1n)],
          [to, systemAccount(5n)],
        ],
        [from, to],
      )
      assert.deepEqual(failure(() => ctx.closeTokenAccount(from, to)).error, {Custom: 11})
      const empty = context(
        [
          [from, tokenAccount(alice, 0n)],
          [to, systemAccount(5n)],
        ],
        [from, to],
      )
      empty.ctx.closeTokenAccount(from, to)
      assert.equal(empty.l.get(from), null)
      assert.equal(empty.l.get(to)!.lamports, 5n + RENT(ACCOUNT_SIZE))
      assert.ok(l.get(from), 'the refused close kept the account')
      assert.deepEqual(
        failure(() => empty.ctx.closeTokenAccount(to, from)),
        {
          error: 'InvalidAccountData',
          message: 'CloseAccount: not an SPL token account',
          logs: ['Program log: CloseAccount: not an SPL token account'],
        },
      )
    })
  })

  describe('the runtime’s rules', () => {
    it('refuses a change to a read-only account, naming what changed', () => {
      const {ctx} = context([[from, systemAccount(5n)]], [])
      assert.deepEqual(
        failure(() => ctx.set(from, systemAccount(6n))),
        {
          error: 'ReadonlyLamportChange',
          message: `instruction changed the balance of read-only account ${from.toBase58()}`,
          logs: [`Program log: instruction changed the balance of read-only account ${from.toBase58()}`],
        },
      )
      assert.deepEqual(
        failure(() => ctx.set(from, {...systemAccount(5n), data: Buffer.from([1])})).error,
        'ReadonlyDataModified',
      )
      assert.match(
        failure(() => ctx.set(from, {...systemAccount(5n), data: Buffer.from([1])})).message,
        /changed the data of/,
      )
    })

    it('creates an account paid by a signer, topping up only what a pre-funded one lacks', () => {
      const payer = Keypair.generate().publicKey
      const target = Keypair.generate().publicKey
      const owner = Keypair.generate().publicKey
      const {ctx, l} = context(
        [
          [payer, systemAccount(10n ** 9n)],
          [target, systemAccount(1000n)],
        ],
        [payer, target],
      )
      ctx.createAccount(meta(target, true), meta(payer, true), 10, owner)
      assert.equal(l.get(target)!.lamports, RENT(10))
      assert.equal(l.get(payer)!.lamports, 10n ** 9n - (RENT(10) - 1000n))
      assert.ok(l.get(target)!.owner.equals(owner))
      assert.equal(l.get(target)!.data.length, 10)
      // Funded past the rent: nothing more is taken.
      const rich = context(
        [
          [payer, systemAccount(10n ** 9n)],
          [target, systemAccount(RENT(10) + 1n)],
        ],
        [payer, target],
      )
      rich.ctx.createAccount(meta(target, true), meta(payer, true), 10, owner)
      assert.deepEqual([rich.l.get(target)!.lamports, rich.l.get(payer)!.lamports], [RENT(10) + 1n, 10n ** 9n])
    })

    it('refuses to create over an account in use (0), without a signer, or without the lamports (1)', () => {
      const payer = Keypair.generate().publicKey
      const target = Keypair.generate().publicKey
      const inUse: AccountState[] = [
        {...systemAccount(5n), data: Buffer.from([0])},
        {...systemAccount(5n), owner: TOKEN_PROGRAM_ID},
      ]
      for (const existing of inUse) {
        const {ctx} = context(
          [
            [payer, systemAccount(10n ** 9n)],
            [target, existing],
          ],
          [payer, target],
        )
        const refused = failure(() => ctx.createAccount(meta(target, true), meta(payer, true), 10, alice))
        assert.deepEqual(refused.error, {Custom: 0})
        assert.equal(refused.message, `Create Account: account ${target.toBase58()} already in use`)
        assert.deepEqual(refused.logs, [`Program log: Create Account: account ${target.toBase58()} already in use`])
        const token = failure(() => ctx.createTokenAccount(meta(target, true), meta(payer, true), MINT, alice))
        assert.deepEqual(token.error, {Custom: 0})
      }
      const {ctx} = context([[payer, systemAccount(RENT(10) - 1n)]], [payer, target])
      assert.deepEqual(
        failure(() => ctx.createAccount(meta(target, false), meta(payer, true), 10, alice)),
        {
          error: 'PrivilegeEscalation',
          message: `${target.toBase58()}'s signer privilege escalated (the new account)`,
          logs: [`Program log: ${target.toBase58()}'s signer privilege escalated (the new account)`],
        },
      )
      assert.equal(
        failure(() => ctx.createAccount(meta(target, true), meta(payer, true, false), 10, alice)).message,
        `${payer.toBase58()}'s writable privilege escalated (the payer)`,
      )
      assert.deepEqual(
        failure(() => ctx.createAccount(meta(target, true), meta(payer, true), 10, alice)),
        {
          error: {Custom: 1},
          message: `Transfer: insufficient lamports ${RENT(10) - 1n}, need ${RENT(10)}`,
          // The system program logs its message alone, without the token program's "Error: ".
          logs: [`Program log: Transfer: insufficient lamports ${RENT(10) - 1n}, need ${RENT(10)}`],
        },
      )
      const exact = context([[payer, systemAccount(RENT(10))]], [payer, target])
      exact.ctx.createAccount(meta(target, true), meta(payer, true), 10, alice)
      assert.equal(exact.l.get(payer), null, 'the whole balance, to the last lamport')
    })

    it('creates over a target holding exactly the rent without the payer, which then need not be writable', () => {
      const payer = Keypair.generate().publicKey
      const target = Keypair.generate().publicKey
      const {ctx, l} = context(
        [
          [payer, systemAccount(10n ** 9n)],
          [target, systemAccount(RENT(10))],
        ],
        [target],
      )
      ctx.createAccount(meta(target, true), meta(payer, true, false), 10, alice)
      assert.deepEqual([l.get(target)!.lamports, l.get(payer)!.lamports], [RENT(10), 10n ** 9n])
      assert.ok(l.get(target)!.owner.equals(alice))
    })

    it('creates a token account over a target holding exactly the rent without the payer, which need not be writable', () => {
      const payer = Keypair.generate().publicKey
      const target = Keypair.generate().publicKey
      const {ctx, l} = context(
        [
          [payer, systemAccount(10n ** 9n)],
          [target, systemAccount(RENT(ACCOUNT_SIZE))],
        ],
        [target],
      )
      ctx.createTokenAccount(meta(target, true), meta(payer, true, false), MINT, alice)
      assert.deepEqual([l.get(target)!.lamports, l.get(payer)!.lamports], [RENT(ACCOUNT_SIZE), 10n ** 9n])
      assert.ok(ctx.tokenAccount(target)!.owner.equals(alice))
    })

    it("refuses to create a token account over one in use with the system program's message (0)", () => {
      const payer = Keypair.generate().publicKey
      const target = Keypair.generate().publicKey
      const {ctx} = context(
        [
          [payer, systemAccount(10n ** 9n)],
          [target, {...systemAccount(5n), data: Buffer.from([0])}],
        ],
        [payer, target],
      )
      const message = `Create Account: account ${target.toBase58()} already in use`
      assert.deepEqual(
        failure(() => ctx.createTokenAccount(meta(target, true), meta(payer, true), MINT, alice)),
        {error: {Custom: 0}, message, logs: [`Program log: ${message}`]},
      )
    })

    it('creates a token account of the mint owned by its authority, topping up a pre-funded one', () => {
      const payer = Keypair.generate().publicKey
      const target = Keypair.generate().publicKey
      const {ctx, l} = context(
        [
          [payer, systemAccount(10n ** 9n)],
          [target, systemAccount(7n)],
        ],
        [payer, target],
      )
      ctx.createTokenAccount(meta(target, true), meta(payer, true), MINT, alice)
      const created = ctx.tokenAccount(target)!
      assert.ok(created.mint.equals(MINT) && created.owner.equals(alice))
      assert.equal(created.amount, 0n)
      assert.equal(l.get(target)!.lamports, RENT(ACCOUNT_SIZE))
      assert.equal(l.get(payer)!.lamports, 10n ** 9n - (RENT(ACCOUNT_SIZE) - 7n))
    })

    it('closes an account into the destination, adding its lamports', () => {
      const {ctx, l} = context(
        [
          [from, systemAccount(5n)],
          [to, systemAccount(7n)],
        ],
        [from, to],
      )
      ctx.close(from, to)
      assert.equal(l.get(from), null)
      assert.equal(l.get(to)!.lamports, 12n)
    })
  })

  describe('failures', () => {
    it("carry the program error's name and message as their own message, and Anchor's log line", () => {
      const {code, name, message} = AnchorError.ConstraintMut
      assert.deepEqual(
        failure(() => fail(AnchorError.ConstraintMut, 'job')),
        {
          error: {Custom: code},
          message: `${name}: ${message}`,
          logs: [
            `Program log: AnchorError caused by account: job. Error Code: ${name}. Error Number: ${code}. Error Message: ${message}.`,
          ],
        },
      )
    })

    it('carry no log lines unless given some', () => {
      assert.deepEqual(new InstructionFailure('ProgramFailedToComplete', 'panicked').logs, [])
    })
  })

  describe('an instruction run over the map', () => {
    const programId = Keypair.generate().publicKey
    const admin = Keypair.generate().publicKey
    const vault = Keypair.generate().publicKey
    const user = Keypair.generate().publicKey
    const NOW = 1_700_000_000n
    const program = (executable: boolean): AccountState => ({...systemAccount(1n), executable})
    /** An account of the jobs program holding `data`, rent-exempt. */
    const owned = (data: Buffer): AccountState => ({
      lamports: RENT(data.length),
      owner: programId,
      data,
      executable: false,
    })
    /** A market of `alice`'s with an empty queue, free and open to any node unless `fields` say otherwise. */
    const marketData = (fields: Partial<MarketAccount> = {}) =>
      encodeMarketAccount({
        authority: alice,
        jobExpiration: 0n,
        jobPrice: 0n,
        jobTimeout: 0n,
        jobType: 0,
        vault,
        vaultBump: 255,
        nodeAccessKey: SystemProgram.programId,
        nodeXnosMinimum: 0n,
        queueType: QueueType.EMPTY,
        queue: [],
        ...fields,
      })
    /** Runs `ix` over the ledger `l` at NOW. */
    const execute = (l: ReturnType<typeof ledger>, ix: ReturnType<typeof jobsInstruction>) =>
      executeJobsInstruction({
        ids: {programId, tokenMint: MINT, marketAdmin: admin},
        accounts: ix.keys,
        data: ix.data,
        ledger: l,
        now: NOW,
        rentExempt: RENT,
        log: () => {},
      })

    /** `close_admin` of a market that lies at the market admin's own address, so it is closed into itself. */
    function closeAdmin(tokenProgram: AccountState) {
      const l = ledger()
      l.set(admin, owned(marketData()))
      l.set(vault, tokenAccount(vault, 0n))
      l.set(user, tokenAccount(alice, 0n))
      l.set(TOKEN_PROGRAM_ID, tokenProgram)
      const ix = jobsInstruction(
        programId,
        'closeAdmin',
        {market: admin, vault, user, authority: admin, tokenProgram: TOKEN_PROGRAM_ID},
        {},
      )
      return failure(() => execute(l, ix))
    }

    const anchorLog = (account: string, {code, name, message}: typeof AnchorError.ConstraintMut) =>
      `Program log: AnchorError caused by account: ${account}. Error Code: ${name}. Error Number: ${code}. Error Message: ${message}.`

    it('refuses a token program account that is not executable (3009)', () => {
      assert.deepEqual(closeAdmin(program(false)).logs, [
        anchorLog('token_program', AnchorError.InvalidProgramExecutable),
      ])
    })

    it('refuses to close an account into itself (2011): a market at the admin’s address', () => {
      assert.deepEqual(closeAdmin(program(true)).logs, [anchorLog('market', AnchorError.ConstraintClose)])
    })

    /** `clean` of a done job that ended `age` seconds before the clock, on a market whose jobs expire after 100. */
    function clean(age: bigint) {
      const l = ledger()
      const [job, market, payer] = [Keypair.generate().publicKey, Keypair.generate().publicKey, alice]
      const jobData = encodeJobAccount({
        ipfsJob: new Uint8Array(32),
        ipfsResult: new Uint8Array(32),
        market,
        node: bob,
        payer,
        price: 1n,
        project: payer,
        state: JobState.DONE,
        timeEnd: NOW - age,
        timeStart: NOW - age - 10n,
        timeout: 60n,
      })
      l.set(job, owned(jobData))
      l.set(market, owned(marketData({jobExpiration: 100n, jobPrice: 1n, jobTimeout: 60n})))
      l.set(payer, systemAccount(5n))
      execute(l, jobsInstruction(programId, 'clean', {job, market, payer}, {}))
      return {closed: l.get(job) === null, payerLamports: l.get(payer)!.lamports, jobRent: RENT(jobData.length)}
    }

    it('cleans a done job only once more than the market’s expiration has passed since it ended', () => {
      const afterExpiry = clean(101n)
      assert.deepEqual(afterExpiry, {
        closed: true,
        payerLamports: 5n + afterExpiry.jobRent,
        jobRent: afterExpiry.jobRent,
      })
      // At exactly the expiration the job is not yet expired (the program compares with <).
      const {error, message} = failure(() => clean(100n))
      assert.deepEqual(error, {Custom: JobsError.JobNotExpired.code})
      assert.equal(message, `JobNotExpired: ${JobsError.JobNotExpired.message}`)
    })
  })
})
