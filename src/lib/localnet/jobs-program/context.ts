/**
 * What a jobs program instruction runs against: its accounts, the buffered ledger, the clock and rent, and the
 * system-program and SPL-token effects the real program performs through CPI (create, close, transfer), with
 * the runtime's rules on them (only writable accounts change, only signers' lamports are spent).
 */
import {
  AccountLayout,
  ACCOUNT_SIZE,
  AccountState as TokenState,
  TOKEN_PROGRAM_ID,
  type RawAccount,
} from '@solana/spl-token'
import {PublicKey, SystemProgram} from '@solana/web3.js'

import type {AccountState, Overlay} from '../chain/ledger.js'
import {CpiError, failCpi, failRuntime} from './errors.js'

/** The addresses a build of the jobs program is compiled with (`common/src/id.rs`). */
export interface JobsProgramIds {
  programId: PublicKey
  /** `NOS_TOKEN`: the payment mint; the localnet's build uses the localnet's own mint. */
  tokenMint: PublicKey
  /** `MARKET_ADMIN`: signs `close_admin`, `quit_admin` and `clean_admin`; the localnet's faucet. */
  marketAdmin: PublicKey
}

export {STAKING_PROGRAM_ID} from '../../market/codec/pda.js'
export const REWARDS_PROGRAM_ID = new PublicKey('nosRB8DUV67oLNrL45bo2pFLrmsWPiewe2Lk2DRNYCp')
export const METADATA_PROGRAM_ID = new PublicKey('metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s')

export interface InstructionAccount {
  pubkey: PublicKey
  isSigner: boolean
  isWritable: boolean
}

/** Execution context of one instruction. */
export class JobsContext {
  constructor(
    readonly ids: JobsProgramIds,
    private readonly ledger: Overlay,
    /** The instruction's accounts by the program's names for them. */
    private readonly named: Map<string, InstructionAccount>,
    /** Every account of the instruction: the runtime's writable and signer flags. */
    private readonly all: readonly InstructionAccount[],
    /** Unix seconds of the current slot. */
    readonly now: bigint,
    private readonly rentExempt: (size: number) => bigint,
    readonly log: (line: string) => void,
  ) {}

  get programId(): PublicKey {
    return this.ids.programId
  }

  /** The account passed under a name. */
  account(name: string): InstructionAccount {
    return this.named.get(name)!
  }

  key(name: string): PublicKey {
    return this.account(name).pubkey
  }

  /** An account's current state (null when it holds no lamports). */
  get(key: PublicKey): AccountState | null {
    return this.ledger.get(key)
  }

  /** Changes an account, as the runtime allows: only writable accounts of the instruction change. */
  set(key: PublicKey, state: AccountState | null): void {
    const before = this.ledger.get(key)
    if (!this.writable(key)) {
      const lamportsChanged = (before?.lamports ?? 0n) !== (state?.lamports ?? 0n)
      failRuntime(
        lamportsChanged ? 'ReadonlyLamportChange' : 'ReadonlyDataModified',
        `instruction changed the ${lamportsChanged ? 'balance' : 'data'} of read-only account ${key.toBase58()}`,
      )
    }
    this.ledger.set(key, state)
  }

  /** Replaces a program account's data at its allocated size, keeping its lamports. */
  store(key: PublicKey, data: Buffer): void {
    this.set(key, {...this.ledger.get(key)!, data})
  }

  /** The system program's `create_account` (or, for a pre-funded target, transfer + allocate + assign). */
  createAccount(target: InstructionAccount, payer: InstructionAccount, space: number, owner: PublicKey): void {
    this.requireSigner(target, 'the new account')
    this.set(target.pubkey, {...this.fundNew(target, payer, space), owner, data: Buffer.alloc(space)})
  }

  /** Anchor's `close`: the account's lamports go to `destination`, its data and owner are reset. */
  close(key: PublicKey, destination: PublicKey): void {
    const state = this.ledger.get(key)
    const target = this.ledger.get(destination) ?? emptySystemAccount()
    this.set(destination, {...target, lamports: target.lamports + (state?.lamports ?? 0n)})
    this.set(key, null)
  }

  /** Reads an SPL token account (null when the bytes are not one). */
  tokenAccount(key: PublicKey): RawAccount | null {
    const state = this.ledger.get(key)
    if (!state || !state.owner.equals(TOKEN_PROGRAM_ID) || state.data.length !== ACCOUNT_SIZE) return null
    const account = AccountLayout.decode(state.data)
    return account.state === TokenState.Uninitialized ? null : account
  }

  /** Creates an initialized SPL token account of `mint` whose authority is `authority` (the market's vault). */
  createTokenAccount(target: InstructionAccount, payer: InstructionAccount, mint: PublicKey, authority: PublicKey) {
    const funded = this.fundNew(target, payer, ACCOUNT_SIZE)
    this.set(target.pubkey, {...funded, owner: TOKEN_PROGRAM_ID, data: emptyTokenAccountData(mint, authority)})
  }

  /** The SPL token program's Transfer (not TransferChecked), with its frozen, mint, owner and balance checks. */
  transferTokens(from: PublicKey, to: PublicKey, authority: PublicKey, amount: bigint): void {
    const source = this.tokenAccount(from)
    const destination = this.tokenAccount(to)
    if (!source || !destination) failRuntime('InvalidAccountData', 'Transfer: not an SPL token account')
    if (source.state === TokenState.Frozen || destination.state === TokenState.Frozen)
      failCpi(CpiError.TokenAccountFrozen, 'Account is frozen')
    if (!source.mint.equals(destination.mint))
      failCpi(CpiError.TokenMintMismatch, 'Account not associated with this Mint')
    if (!source.owner.equals(authority)) failCpi(CpiError.TokenOwnerMismatch, 'owner does not match')
    if (source.amount < amount) failCpi(CpiError.TokenInsufficientFunds, 'insufficient funds')
    this.log(`Program ${TOKEN_PROGRAM_ID.toBase58()} invoke [2]`)
    this.log('Program log: Instruction: Transfer')
    if (amount > 0n && !from.equals(to)) {
      this.writeTokenAmount(from, source, source.amount - amount)
      this.writeTokenAmount(to, destination, destination.amount + amount)
    }
    this.log(`Program ${TOKEN_PROGRAM_ID.toBase58()} success`)
  }

  /** The SPL token program's CloseAccount of an empty account; its lamports go to `destination`. */
  closeTokenAccount(key: PublicKey, destination: PublicKey): void {
    const account = this.tokenAccount(key)
    if (!account) failRuntime('InvalidAccountData', 'CloseAccount: not an SPL token account')
    if (account.amount !== 0n) failCpi(11, 'Non-native account can only be closed if its balance is zero')
    this.close(key, destination)
  }

  private writeTokenAmount(key: PublicKey, account: RawAccount, amount: bigint): void {
    const data = Buffer.alloc(ACCOUNT_SIZE)
    AccountLayout.encode({...account, amount}, data)
    this.store(key, data)
  }

  /**
   * The system program's checks and funding of an account it creates: refused over one in use, topped up by
   * `payer` to the rent exemption of `space` (no transfer, so no signature, when it already holds that).
   */
  private fundNew(target: InstructionAccount, payer: InstructionAccount, space: number): AccountState {
    const existing = this.ledger.get(target.pubkey)
    if (existing && (existing.data.length > 0 || !existing.owner.equals(SystemProgram.programId))) {
      failCpi(
        CpiError.SystemAccountAlreadyInUse,
        `Create Account: account ${target.pubkey.toBase58()} already in use`,
        'system',
      )
    }
    const needed = this.rentExempt(space) - (existing?.lamports ?? 0n)
    if (needed > 0n) this.moveLamports(payer, target.pubkey, needed)
    return this.ledger.get(target.pubkey)!
  }

  /** A system transfer signed by `payer`: it must sign, be writable and hold the lamports. */
  private moveLamports(payer: InstructionAccount, to: PublicKey, amount: bigint): void {
    this.requireSigner(payer, 'the payer')
    const from = this.ledger.get(payer.pubkey)
    if (!from || from.lamports < amount) {
      failCpi(
        CpiError.SystemResultWithNegativeLamports,
        `Transfer: insufficient lamports ${from?.lamports ?? 0n}, need ${amount}`,
        'system',
      )
    }
    this.set(payer.pubkey, {...from, lamports: from.lamports - amount})
    const target = this.ledger.get(to) ?? emptySystemAccount()
    this.set(to, {...target, lamports: target.lamports + amount})
  }

  /** A system program call needs the account's signature, which the transaction must carry. */
  private requireSigner(account: InstructionAccount, what: string): void {
    if (!account.isSigner || !account.isWritable) {
      failRuntime(
        'PrivilegeEscalation',
        `${account.pubkey.toBase58()}'s ${account.isSigner ? 'writable' : 'signer'} privilege escalated (${what})`,
      )
    }
  }

  private writable(key: PublicKey): boolean {
    return this.all.some((a) => a.isWritable && a.pubkey.equals(key))
  }
}

function emptySystemAccount(): AccountState {
  return {lamports: 0n, owner: SystemProgram.programId, data: Buffer.alloc(0), executable: false}
}

/** The bytes of an initialized, empty SPL token account of `mint` held by `owner`. */
export function emptyTokenAccountData(mint: PublicKey, owner: PublicKey): Buffer {
  const data = Buffer.alloc(ACCOUNT_SIZE)
  AccountLayout.encode(
    {
      mint,
      owner,
      amount: 0n,
      delegateOption: 0,
      delegate: PublicKey.default,
      state: TokenState.Initialized,
      isNativeOption: 0,
      isNative: 0n,
      delegatedAmount: 0n,
      closeAuthorityOption: 0,
      closeAuthority: PublicKey.default,
    },
    data,
  )
  return data
}
