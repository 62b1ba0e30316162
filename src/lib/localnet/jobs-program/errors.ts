/** Error codes the jobs program (an Anchor program) returns, as `{"Custom": code}` instruction errors. */
import type {InstructionErrorJson} from '../tx-error.js'

/** Anchor framework errors the program's account constraints raise. */
export const AnchorError = {
  InstructionFallbackNotFound: 101,
  InstructionDidNotDeserialize: 102,
  ConstraintMut: 2000,
  ConstraintHasOne: 2001,
  ConstraintRaw: 2003,
  ConstraintSeeds: 2006,
  ConstraintAddress: 2012,
  ConstraintTokenMint: 2014,
  ConstraintTokenOwner: 2015,
  AccountDiscriminatorMismatch: 3002,
  AccountDidNotDeserialize: 3003,
  AccountNotEnoughKeys: 3005,
  AccountOwnedByWrongProgram: 3007,
  AccountNotSigner: 3010,
  AccountNotInitialized: 3012,
} as const

/** The program's own errors (reference/jobs-program-idl.json, "errors"). */
export const JobsError = {
  InvalidMarketAccount: 6000,
  MarketInWrongState: 6001,
  NotInMarketQueue: 6002,
  InvalidJobAccount: 6003,
  JobInWrongState: 6004,
  JobResultNull: 6006,
  JobInvalidProject: 6007,
  JobTimeoutNotGreater: 6008,
  JobInvalidRunAccount: 6009,
  NodeQueueDoesNotMatch: 6011,
  NodeNotEnoughStake: 6013,
  NodeAlreadyQueued: 6014,
  NodeKeyInvalidCollection: 6018,
} as const

/** Errors of the programs the jobs program calls (system program, SPL token) that surface through it. */
export const CpiError = {
  SystemAccountAlreadyInUse: 0,
  SystemResultWithNegativeLamports: 1,
  TokenInsufficientFunds: 1,
  TokenMintMismatch: 3,
  TokenOwnerMismatch: 4,
  TokenAccountFrozen: 17,
} as const

/** An instruction failed: the transaction is refused and nothing it did is kept. */
export class InstructionFailure extends Error {
  constructor(
    readonly error: InstructionErrorJson,
    message: string,
  ) {
    super(message)
  }
}

/** Fails the instruction with a custom program error code. */
export function fail(code: number, message: string): never {
  throw new InstructionFailure({Custom: code}, message)
}
