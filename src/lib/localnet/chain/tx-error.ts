/**
 * Transaction errors in the JSON shape a Solana node returns (`"BlockhashNotFound"`,
 * `{"InstructionError":[0,{"Custom":1}]}`) and the messages it prints for them, converted from litesvm's results.
 */
import {
  type FailedTransactionMetadata,
  InstructionErrorBorshIo,
  InstructionErrorCustom,
  TransactionErrorDuplicateInstruction,
  TransactionErrorInstructionError,
  TransactionErrorInsufficientFundsForRent,
} from 'litesvm/dist/internal.js'

export type InstructionErrorJson = string | {Custom: number} | {BorshIoError: string}
export type TransactionErrorJson =
  | string
  | {InstructionError: [number, InstructionErrorJson]}
  | {DuplicateInstruction: number}
  | {InsufficientFundsForRent: {account_index: number}}
  | {ProgramExecutionTemporarilyRestricted: {account_index: number}}

// Variant order of litesvm's TransactionErrorFieldless and InstructionErrorFieldless (const enums we cannot
// read at run time), which follow agave's TransactionError and InstructionError.
const TRANSACTION_ERRORS = [
  'AccountInUse',
  'AccountLoadedTwice',
  'AccountNotFound',
  'ProgramAccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'CallChainTooDeep',
  'MissingSignatureForFee',
  'InvalidAccountIndex',
  'SignatureFailure',
  'InvalidProgramForExecution',
  'SanitizeFailure',
  'ClusterMaintenance',
  'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit',
  'UnsupportedVersion',
  'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit',
  'WouldExceedAccountDataBlockLimit',
  'TooManyAccountLocks',
  'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex',
  'InvalidRentPayingAccount',
  'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit',
  'MaxLoadedAccountsDataSizeExceeded',
  'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit',
  'UnbalancedTransaction',
  'ProgramCacheHitMaxLimit',
  'CommitCancelled',
]
const INSTRUCTION_ERRORS = [
  'GenericError',
  'InvalidArgument',
  'InvalidInstructionData',
  'InvalidAccountData',
  'AccountDataTooSmall',
  'InsufficientFunds',
  'IncorrectProgramId',
  'MissingRequiredSignature',
  'AccountAlreadyInitialized',
  'UninitializedAccount',
  'UnbalancedInstruction',
  'ModifiedProgramId',
  'ExternalAccountLamportSpend',
  'ExternalAccountDataModified',
  'ReadonlyLamportChange',
  'ReadonlyDataModified',
  'DuplicateAccountIndex',
  'ExecutableModified',
  'RentEpochModified',
  'NotEnoughAccountKeys',
  'AccountDataSizeChanged',
  'AccountNotExecutable',
  'AccountBorrowFailed',
  'AccountBorrowOutstanding',
  'DuplicateAccountOutOfSync',
  'InvalidError',
  'ExecutableDataModified',
  'ExecutableLamportChange',
  'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId',
  'CallDepth',
  'MissingAccount',
  'ReentrancyNotAllowed',
  'MaxSeedLengthExceeded',
  'InvalidSeeds',
  'InvalidRealloc',
  'ComputationalBudgetExceeded',
  'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure',
  'ProgramFailedToComplete',
  'ProgramFailedToCompile',
  'Immutable',
  'IncorrectAuthority',
  'AccountNotRentExempt',
  'InvalidAccountOwner',
  'ArithmeticOverflow',
  'UnsupportedSysvar',
  'IllegalOwner',
  'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded',
  'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits',
  'BorshIoError',
]

/** The JSON form of a failed litesvm transaction's error. */
export function litesvmErrorToJson(failed: FailedTransactionMetadata): TransactionErrorJson {
  const err = failed.err()
  if (typeof err === 'number') return TRANSACTION_ERRORS[err] ?? 'InvalidError'
  if (err instanceof TransactionErrorInstructionError) {
    const inner = err.err()
    if (inner instanceof InstructionErrorCustom) return {InstructionError: [err.index, {Custom: inner.code}]}
    if (inner instanceof InstructionErrorBorshIo) return {InstructionError: [err.index, {BorshIoError: inner.msg}]}
    return {InstructionError: [err.index, INSTRUCTION_ERRORS[inner as number] ?? 'GenericError']}
  }
  if (err instanceof TransactionErrorDuplicateInstruction) return {DuplicateInstruction: err.index}
  if (err instanceof TransactionErrorInsufficientFundsForRent)
    return {InsufficientFundsForRent: {account_index: err.accountIndex}}
  return {ProgramExecutionTemporarilyRestricted: {account_index: err.accountIndex}}
}

const TRANSACTION_MESSAGES: Record<string, string> = {
  AccountInUse: 'Account in use',
  AccountLoadedTwice: 'Account loaded twice',
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  ProgramAccountNotFound: 'Attempt to load a program that does not exist',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  InvalidAccountForFee: 'This account may not be used to pay transaction fees',
  AlreadyProcessed: 'This transaction has already been processed',
  BlockhashNotFound: 'Blockhash not found',
  SignatureFailure: 'Transaction did not pass signature verification',
  InvalidProgramForExecution: 'This program may not be used for executing instructions',
  SanitizeFailure: 'Transaction failed to sanitize accounts offsets correctly',
  UnsupportedVersion: 'Transaction version is unsupported',
}

const INSTRUCTION_MESSAGES: Record<string, string> = {
  GenericError: 'generic instruction error',
  InvalidArgument: 'invalid program argument',
  InvalidInstructionData: 'invalid instruction data',
  InvalidAccountData: 'invalid account data for instruction',
  InsufficientFunds: 'insufficient funds for instruction',
  MissingRequiredSignature: 'missing required signature for instruction',
  NotEnoughAccountKeys: 'insufficient account keys for instruction',
  IncorrectProgramId: 'incorrect program id for instruction',
}

/** The message a node prints for an error, e.g. "Error processing Instruction 0: custom program error: 0x1". */
export function transactionErrorMessage(err: TransactionErrorJson): string {
  if (typeof err === 'string') return TRANSACTION_MESSAGES[err] ?? err
  if ('InstructionError' in err) {
    const [index, inner] = err.InstructionError
    let text: string
    if (typeof inner === 'string') text = INSTRUCTION_MESSAGES[inner] ?? inner
    else if ('Custom' in inner) text = `custom program error: 0x${inner.Custom.toString(16)}`
    else text = `Failed to serialize or deserialize account data: ${inner.BorshIoError}`
    return `Error processing Instruction ${index}: ${text}`
  }
  if ('InsufficientFundsForRent' in err) {
    return `Transaction results in an account (${err.InsufficientFundsForRent.account_index}) with insufficient funds for rent`
  }
  return JSON.stringify(err)
}
