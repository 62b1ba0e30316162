/**
 * What a jobs program instruction runs against: its named accounts, the buffered ledger, the clock and rent, and
 * the system-program and SPL-token effects the real program performs through CPI (create, close, transfer).
 */
import {
  AccountLayout,
  ACCOUNT_SIZE,
  AccountState as TokenState,
  TOKEN_PROGRAM_ID,
  type RawAccount,
} from '@solana/spl-token'
import {PublicKey, SystemProgram} from '@solana/web3.js'

import type {AccountState, Overlay} from '../ledger.js'
import {AnchorError, CpiError, fail} from './errors.js'

export interface InstructionAccount {
  pubkey: PublicKey
  isSigner: boolean
  isWritable: boolean
}

/** Execution context of one instruction. */
export class JobsContext {
  constructor(
    readonly programId: PublicKey,
    private readonly ledger: Overlay,
    private readonly accounts: Map<string, InstructionAccount>,
    /** Unix seconds of the current slot. */
    readonly now: bigint,
    private readonly rentExempt: (size: number) => bigint,
    readonly log: (line: string) => void,
  ) {}

  /** True when the instruction takes an account of this name. */
  has(name: string): boolean {
    return this.accounts.has(name)
  }

  /** The address passed for an account name of the IDL. */
  key(name: string): PublicKey {
    return this.accounts.get(name)!.pubkey
  }

  /** Reads a program-owned account and decodes it, with Anchor's owner and discriminator checks. */
  load<T>(name: string, decode: (data: Uint8Array) => T): T {
    const state = this.ledger.get(this.key(name))
    if (!state) fail(AnchorError.AccountNotInitialized, `${name}: the account is not initialized`)
    if (!state.owner.equals(this.programId))
      fail(AnchorError.AccountOwnedByWrongProgram, `${name}: owned by the wrong program`)
    try {
      return decode(state.data)
    } catch {
      fail(AnchorError.AccountDiscriminatorMismatch, `${name}: not the expected account type`)
    }
  }

  /** Overwrites a program-owned account's data, keeping its lamports. */
  store(name: string, data: Buffer): void {
    const key = this.key(name)
    const state = this.ledger.get(key)!
    this.ledger.set(key, {...state, data})
  }

  /** Creates a rent-exempt account paid by `payer`, as Anchor's `init` does through the system program. */
  create(name: string, payerName: string, owner: PublicKey, data: Buffer): void {
    const key = this.key(name)
    const existing = this.ledger.get(key)
    if (existing && (existing.data.length > 0 || !existing.owner.equals(SystemProgram.programId))) {
      fail(CpiError.SystemAccountAlreadyInUse, `${name}: account ${key.toBase58()} already in use`)
    }
    const needed = this.rentExempt(data.length) - (existing?.lamports ?? 0n)
    if (needed > 0n) this.moveLamports(this.key(payerName), key, needed, owner, data)
    else this.ledger.set(key, {lamports: existing!.lamports, owner, data, executable: false})
  }

  /** Closes an account, sending its lamports to `destination` (Anchor's `close`). */
  close(name: string, destinationName: string): void {
    const key = this.key(name)
    const state = this.ledger.get(key)
    const destination = this.key(destinationName)
    const target = this.ledger.get(destination) ?? emptySystemAccount()
    this.ledger.set(destination, {...target, lamports: target.lamports + (state?.lamports ?? 0n)})
    this.ledger.set(key, null)
  }

  /** Reads an SPL token account, failing as Anchor's `Account<TokenAccount>` does when it is not one. */
  tokenAccount(name: string): RawAccount {
    const state = this.ledger.get(this.key(name))
    if (!state) fail(AnchorError.AccountNotInitialized, `${name}: the token account does not exist`)
    if (!state.owner.equals(TOKEN_PROGRAM_ID))
      fail(AnchorError.AccountOwnedByWrongProgram, `${name}: not an SPL token account`)
    if (state.data.length !== ACCOUNT_SIZE)
      fail(AnchorError.AccountDidNotDeserialize, `${name}: not an SPL token account`)
    return AccountLayout.decode(state.data)
  }

  /** Creates an initialized SPL token account whose authority is `authority` (the market's vault). */
  createTokenAccount(name: string, payerName: string, mint: PublicKey, authority: PublicKey): void {
    const data = Buffer.alloc(ACCOUNT_SIZE)
    AccountLayout.encode(
      {
        mint,
        owner: authority,
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
    this.create(name, payerName, TOKEN_PROGRAM_ID, data)
  }

  /** Moves tokens as the SPL token program's Transfer does, with its mint, owner, frozen and balance checks. */
  transferTokens(fromName: string, toName: string, authority: PublicKey, amount: bigint): void {
    const from = this.tokenAccount(fromName)
    const to = this.tokenAccount(toName)
    if (from.state === TokenState.Frozen || to.state === TokenState.Frozen)
      fail(CpiError.TokenAccountFrozen, 'token account is frozen')
    if (!from.mint.equals(to.mint)) fail(CpiError.TokenMintMismatch, `${fromName} and ${toName} hold different tokens`)
    if (!from.owner.equals(authority))
      fail(CpiError.TokenOwnerMismatch, `${fromName} is not owned by ${authority.toBase58()}`)
    if (from.amount < amount)
      fail(CpiError.TokenInsufficientFunds, `${fromName}: insufficient funds (${from.amount} < ${amount})`)
    if (amount === 0n) return
    this.log(`Program ${TOKEN_PROGRAM_ID.toBase58()} invoke [2]`)
    this.log('Program log: Instruction: Transfer')
    this.writeTokenAmount(fromName, from, from.amount - amount)
    // Read again: `from` and `to` may be the same account.
    const fresh = this.tokenAccount(toName)
    this.writeTokenAmount(toName, fresh, fresh.amount + amount)
    this.log(`Program ${TOKEN_PROGRAM_ID.toBase58()} success`)
  }

  private writeTokenAmount(name: string, account: RawAccount, amount: bigint): void {
    const data = Buffer.alloc(ACCOUNT_SIZE)
    AccountLayout.encode({...account, amount}, data)
    this.store(name, data)
  }

  private moveLamports(from: PublicKey, to: PublicKey, amount: bigint, owner: PublicKey, data: Buffer): void {
    const payer = this.ledger.get(from)
    if (!payer || payer.lamports < amount) {
      fail(CpiError.SystemResultWithNegativeLamports, `payer ${from.toBase58()} has insufficient lamports for rent`)
    }
    this.ledger.set(from, {...payer, lamports: payer.lamports - amount})
    const existing = this.ledger.get(to)
    this.ledger.set(to, {lamports: (existing?.lamports ?? 0n) + amount, owner, data, executable: false})
  }
}

function emptySystemAccount(): AccountState {
  return {lamports: 0n, owner: SystemProgram.programId, data: Buffer.alloc(0), executable: false}
}
