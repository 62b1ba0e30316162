/**
 * The errors the deployed jobs program returns (reference/jobs-program-constraints.md section 5): Anchor's own,
 * the program's (`NosanaJobsError`), the shared `NosanaError` and staking's `InvalidStakeAccount`. Numbers
 * collide between the last three, so a failure carries the name and message too, and logs them as Anchor does.
 */
import type {InstructionErrorJson} from '../chain/tx-error.js'

/** One error of the program: its enum, name, number and message, as the program logs them. */
export interface ProgramError {
  name: string
  code: number
  message: string
}

function errors<const T extends Record<string, readonly [number, string]>>(table: T): {[K in keyof T]: ProgramError} {
  return Object.fromEntries(Object.entries(table).map(([name, [code, message]]) => [name, {name, code, message}])) as {
    [K in keyof T]: ProgramError
  }
}

/** Anchor 1.0 framework errors the program can produce. */
export const AnchorError = errors({
  InstructionFallbackNotFound: [101, 'Fallback functions are not supported'],
  InstructionDidNotDeserialize: [102, 'The program could not deserialize the given instruction'],
  ConstraintMut: [2000, 'A mut constraint was violated'],
  ConstraintSigner: [2002, 'A signer constraint was violated'],
  ConstraintSeeds: [2006, 'A seeds constraint was violated'],
  ConstraintClose: [2011, 'A close constraint was violated'],
  ConstraintDuplicateMutableAccount: [2040, 'A duplicate mutable account constraint was violated'],
  AccountDiscriminatorNotFound: [3001, 'No discriminator was found on the account'],
  AccountDiscriminatorMismatch: [3002, 'Account discriminator did not match what was expected'],
  AccountDidNotDeserialize: [3003, 'Failed to deserialize the account'],
  AccountDidNotSerialize: [3004, 'Failed to serialize the account'],
  AccountNotEnoughKeys: [3005, 'Not enough account keys given to the instruction'],
  AccountOwnedByWrongProgram: [3007, 'The given account is owned by a different program than expected'],
  InvalidProgramId: [3008, 'Program ID was not as expected'],
  InvalidProgramExecutable: [3009, 'Program account is not executable'],
  AccountNotSigner: [3010, 'The given account did not sign'],
  AccountNotInitialized: [3012, 'The program expected this account to be already initialized'],
  AccountSysvarMismatch: [3015, 'The given public key does not match the required sysvar'],
  TryingToInitPayerAsProgramAccount: [4101, 'You cannot/should not initialize the payer account as a program account'],
})

/** The jobs program's own errors (reference/jobs-program-idl.json "errors"). */
export const JobsError = errors({
  InvalidMarketAccount: [6000, 'This market account is not valid.'],
  MarketInWrongState: [6001, 'This market does not have the right status.'],
  NotInMarketQueue: [6002, 'Account cannot be find account in market queue.'],
  InvalidJobAccount: [6003, 'This job account is not valid.'],
  JobInWrongState: [6004, 'This job does not have the right status.'],
  JobNotExpired: [6005, 'The job has not yet expired.'],
  JobResultNull: [6006, 'The job result can not be null.'],
  JobInvalidProject: [6007, 'The job has a different project owner.'],
  JobTimeoutNotGreater: [6008, 'The new job timeout should be larger than the current one.'],
  JobInvalidRunAccount: [6009, 'The run account does not match the job.'],
  JobResultsAlreadySet: [6010, 'The job results are already set.'],
  NodeQueueDoesNotMatch: [6011, 'This node queue does not match.'],
  NodeStakeUnauthorized: [6012, 'This node is not authorizing this stake.'],
  NodeNotEnoughStake: [6013, 'This node has not staked enough tokens.'],
  NodeAlreadyQueued: [6014, 'This node is already present in the queue.'],
  NodeNftWrongMetadata: [6015, 'This metadata does not have the correct address.'],
  NodeNftWrongOwner: [6016, 'This NFT is not owned by this node.'],
  NodeNftInvalidAmount: [6017, 'Access NFT amount cannot be 0.'],
  NodeKeyInvalidCollection: [6018, 'This access key does not belong to a verified collection.'],
})

/** `NosanaError` of nosana-common: the same number range as the program's own errors. */
export const NosanaError = errors({
  Unauthorized: [6000, 'This account is not authorized to perform this action.'],
  InvalidOwner: [6001, 'This account is owned by an invalid program.'],
  LamportsNonNull: [6002, 'This account has lamports.'],
  MissingSignature: [6003, 'This account is missing a signature.'],
  InvalidMint: [6006, 'This mint is invalid.'],
  InvalidVault: [6007, 'This account has an invalid vault.'],
  InvalidPayer: [6008, 'This payer account is not valid.'],
  InvalidATA: [6011, 'This Associated Token Account is not valid.'],
})

/** The staking program's error the jobs program raises. */
export const StakingError = errors({
  InvalidStakeAccount: [6012, 'This stake does not belong to the authority.'],
})

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
    /** Log lines the program printed for it (Anchor's error line). */
    readonly logs: string[] = [],
  ) {
    super(message)
  }
}

/** Fails with a program error, logged as Anchor logs it (naming the account whose constraint failed). */
export function fail(error: ProgramError, account?: string): never {
  const cause = account ? `AnchorError caused by account: ${account}.` : 'AnchorError occurred.'
  const line = `Program log: ${cause} Error Code: ${error.name}. Error Number: ${error.code}. Error Message: ${error.message}.`
  throw new InstructionFailure({Custom: error.code}, `${error.name}: ${error.message}`, [line])
}

/**
 * Fails with an error of a program the jobs program called, logged as that program logs it: the SPL token program
 * prints "Error: <message>", the system program its message alone.
 */
export function failCpi(code: number, message: string, program: 'token' | 'system' = 'token'): never {
  throw new InstructionFailure({Custom: code}, message, [
    `Program log: ${program === 'token' ? 'Error: ' : ''}${message}`,
  ])
}

/** Fails with a runtime error (privilege checks, a panic), which carries no custom code. */
export function failRuntime(error: string, message: string): never {
  throw new InstructionFailure(error, message, [`Program log: ${message}`])
}
