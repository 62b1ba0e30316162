/**
 * How the program declares its accounts (Anchor's `#[derive(Accounts)]`), and the accounts as loaded for one
 * instruction: decoded program accounts that the handler changes and the exit phase writes back.
 */
import {AccountLayout, MINT_SIZE, MintLayout, TOKEN_PROGRAM_ID, type RawAccount} from '@solana/spl-token'
import {PublicKey, SystemProgram, SYSVAR_RENT_PUBKEY} from '@solana/web3.js'

import {
  decodeJobAccount,
  decodeMarketAccount,
  decodeRunAccount,
  JOB_ACCOUNT_DISCRIMINATOR,
  JOB_ACCOUNT_SIZE,
  type JobAccount,
  MARKET_ACCOUNT_DISCRIMINATOR,
  MARKET_ACCOUNT_SIZE,
  type MarketAccount,
  RUN_ACCOUNT_DISCRIMINATOR,
  RUN_ACCOUNT_SIZE,
  type RunAccount,
} from '../../market/codec/accounts.js'
import type {AccountState} from '../chain/ledger.js'
import {type InstructionAccount, type JobsContext, REWARDS_PROGRAM_ID, STAKING_PROGRAM_ID} from './context.js'
import {AnchorError, fail, failRuntime, type ProgramError} from './errors.js'
import {
  decodeStakeAccount,
  REFLECTION_ACCOUNT_DISCRIMINATOR,
  REFLECTION_ACCOUNT_SPACE,
  STAKE_ACCOUNT_DISCRIMINATOR,
  type StakeAccount,
} from './foreign.js'

/** Space the program allocates: 8 + the Rust struct's size on SBF (reference section 2), as the client reads it. */
export const ACCOUNT_SPACE = {job: JOB_ACCOUNT_SIZE, run: RUN_ACCOUNT_SIZE, market: MARKET_ACCOUNT_SIZE} as const

/** The program's own account types. */
export type ProgramAccountType = keyof typeof ACCOUNT_SPACE

/** What an account is declared as, which decides the checks made while loading it. */
export type AccountKind =
  | ProgramAccountType
  | 'token'
  | 'mint'
  | 'stake'
  | 'reflection'
  | 'signer'
  | 'unchecked'
  | 'rent'
  | 'systemProgram'
  | 'tokenProgram'
  | 'rewardsProgram'

/** One declared account, in the program's order. */
export interface AccountDecl {
  name: string
  kind: AccountKind
  /** `mut`: must be writable (2000), and a program account is written back at exit. */
  mut?: boolean
  /** `init`: created before the constraints run, paid by the named signer. */
  init?: {payer: string}
  /** `init` of the market's token vault at the PDA [market, mint]. */
  initVault?: {payer: string; market: string; mint: string}
  /** `dup`: exempt from the duplicate-mutable-account check. */
  dup?: boolean
  /** `close = <name>`: closed at exit, its lamports to that account. */
  close?: string
  /** The account's `has_one`, `constraint` and `address` checks, in the program's order. */
  checks?: (a: Loaded) => void
}

const PROGRAMS = {
  systemProgram: SystemProgram.programId,
  tokenProgram: TOKEN_PROGRAM_ID,
  rewardsProgram: REWARDS_PROGRAM_ID,
} as const

const DECODERS = {
  job: [JOB_ACCOUNT_DISCRIMINATOR, decodeJobAccount],
  run: [RUN_ACCOUNT_DISCRIMINATOR, decodeRunAccount],
  market: [MARKET_ACCOUNT_DISCRIMINATOR, decodeMarketAccount],
} as const

/** The accounts of one instruction as loaded: keys, flags and decoded values. */
export class Loaded {
  private readonly values = new Map<string, unknown>()

  constructor(
    readonly ctx: JobsContext,
    readonly decls: readonly AccountDecl[],
    private readonly accounts: ReadonlyMap<string, InstructionAccount>,
  ) {}

  meta(name: string): InstructionAccount {
    return this.accounts.get(name)!
  }

  key(name: string): PublicKey {
    return this.meta(name).pubkey
  }

  market(name = 'market'): MarketAccount {
    return this.values.get(name) as MarketAccount
  }

  job(name = 'job'): JobAccount {
    return this.values.get(name) as JobAccount
  }

  run(name = 'run'): RunAccount {
    return this.values.get(name) as RunAccount
  }

  token(name: string): RawAccount {
    return this.values.get(name) as RawAccount
  }

  stake(name = 'stake'): StakeAccount {
    return this.values.get(name) as StakeAccount
  }

  /** Sets the value of an `init` account (zeroed, then filled by the handler). */
  initialize(name: string, value: unknown): void {
    this.values.set(name, value)
  }

  /** Phase 2: loads every account in declared order with the checks of its declared type. */
  load(): void {
    for (const decl of this.decls) {
      if (decl.init || decl.initVault) continue
      const meta = this.meta(decl.name)
      const state = this.ctx.get(meta.pubkey)
      const value = loadAccount(decl, meta, state, this.ctx.programId)
      if (value !== undefined) this.values.set(decl.name, value)
    }
  }
}

function loadAccount(
  decl: AccountDecl,
  meta: InstructionAccount,
  state: AccountState | null,
  programId: PublicKey,
): unknown {
  const {name, kind} = decl
  switch (kind) {
    case 'signer':
      if (!meta.isSigner) fail(AnchorError.AccountNotSigner, rustName(name))
      return undefined
    case 'unchecked':
      return undefined
    case 'rent':
      if (!meta.pubkey.equals(SYSVAR_RENT_PUBKEY)) fail(AnchorError.AccountSysvarMismatch, rustName(name))
      return undefined
    case 'systemProgram':
    case 'tokenProgram':
    case 'rewardsProgram':
      if (!meta.pubkey.equals(PROGRAMS[kind])) fail(AnchorError.InvalidProgramId, rustName(name))
      // The rewards program, like the jobs program, is deployed on the localnet only as an emulation.
      if (kind !== 'rewardsProgram' && !state?.executable) fail(AnchorError.InvalidProgramExecutable, rustName(name))
      return undefined
    case 'token':
    case 'mint': {
      owned(name, state, TOKEN_PROGRAM_ID)
      const size = kind === 'token' ? 165 : MINT_SIZE
      if (state!.data.length !== size)
        failRuntime('InvalidAccountData', `${name}: not an SPL token ${kind === 'token' ? 'account' : 'mint'}`)
      if (kind === 'mint') {
        if (!MintLayout.decode(state!.data).isInitialized)
          failRuntime('UninitializedAccount', `${name}: not initialized`)
        return undefined
      }
      // State byte at offset 108: 0 uninitialized, 1 initialized, 2 frozen.
      const tokenState = state!.data[108]!
      if (tokenState === 0) failRuntime('UninitializedAccount', `${name}: not initialized`)
      if (tokenState > 2) failRuntime('InvalidAccountData', `${name}: invalid token account state`)
      return decodeToken(state!.data)
    }
    case 'stake':
      owned(name, state, STAKING_PROGRAM_ID)
      return anchorDecode(name, state!, STAKE_ACCOUNT_DISCRIMINATOR, decodeStakeAccount)
    case 'reflection':
      owned(name, state, REWARDS_PROGRAM_ID)
      return anchorDecode(name, state!, REFLECTION_ACCOUNT_DISCRIMINATOR, (data) => {
        if (data.length < REFLECTION_ACCOUNT_SPACE) throw new RangeError('short')
        return true
      })
    default: {
      owned(name, state, programId)
      const [discriminator, decode] = DECODERS[kind]
      return anchorDecode(name, state!, discriminator, decode as (data: Uint8Array) => unknown)
    }
  }
}

/** `Account<T>`: a closed (system-owned, empty) account is not initialized; any other owner is the wrong one. */
function owned(name: string, state: AccountState | null, owner: PublicKey): void {
  if (!state) fail(AnchorError.AccountNotInitialized, rustName(name))
  if (!state.owner.equals(owner)) fail(AnchorError.AccountOwnedByWrongProgram, rustName(name))
}

function anchorDecode<T>(name: string, state: AccountState, discriminator: Buffer, decode: (d: Uint8Array) => T): T {
  if (state.data.length < 8) fail(AnchorError.AccountDiscriminatorNotFound, rustName(name))
  if (!discriminator.equals(state.data.subarray(0, 8))) fail(AnchorError.AccountDiscriminatorMismatch, rustName(name))
  try {
    return decode(state.data)
  } catch {
    fail(AnchorError.AccountDidNotDeserialize, rustName(name))
  }
}

function decodeToken(data: Buffer): RawAccount {
  return AccountLayout.decode(data)
}

/** The Rust name of an account (`payerRun` → `payer_run`), as Anchor's error logs print it. */
export function rustName(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
}

/** Fails with `error`, naming the account whose constraint failed. */
export function require(ok: boolean, error: ProgramError, account: string): void {
  if (!ok) fail(error, rustName(account))
}

const ZERO = new Uint8Array(32)

/** A zeroed account of a program type, as `init` leaves it before the handler fills it. */
export function zeroed(kind: 'job' | 'run' | 'market'): JobAccount | RunAccount | MarketAccount {
  const key = PublicKey.default
  if (kind === 'run') return {job: key, node: key, payer: key, state: 0, time: 0n}
  if (kind === 'job') {
    return {
      ipfsJob: ZERO,
      ipfsResult: ZERO,
      market: key,
      node: key,
      payer: key,
      price: 0n,
      project: key,
      state: 0,
      timeEnd: 0n,
      timeStart: 0n,
      timeout: 0n,
    }
  }
  return {
    authority: key,
    jobExpiration: 0n,
    jobPrice: 0n,
    jobTimeout: 0n,
    jobType: 0,
    vault: key,
    vaultBump: 0,
    nodeAccessKey: key,
    nodeXnosMinimum: 0n,
    queueType: 0,
    queue: [],
  }
}
