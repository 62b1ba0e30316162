/**
 * The jobs program's instructions as in reference/jobs-program-idl.json: account order, signer and writable
 * flags, and Borsh arguments after the 8-byte discriminator. One table drives both encoding (the client) and
 * decoding (the localnet's executor), so the two cannot drift apart.
 */
import {PublicKey, TransactionInstruction} from '@solana/web3.js'

import {BorshReader, BorshWriter} from './borsh.js'
import {instructionDiscriminator} from './discriminator.js'

type ArgType = 'u8' | 'u64' | 'i64' | 'u128' | 'bytes32'
/** [name, writable, signer] */
type AccountSpec = readonly [string, boolean, boolean]

// `close` and `closeAdmin` take the same accounts (the IDL lists them twice).
const CLOSE_MARKET = {
  accounts: [
    ['market', true, false],
    ['vault', true, false],
    ['user', true, false],
    ['authority', false, true],
    ['tokenProgram', false, false],
  ],
  args: [],
} as const

const SPECS = {
  open: {
    accounts: [
      ['mint', false, false],
      ['market', true, true],
      ['vault', true, false],
      ['authority', true, true],
      ['accessKey', false, false],
      ['rent', false, false],
      ['systemProgram', false, false],
      ['tokenProgram', false, false],
    ],
    args: [
      ['jobExpiration', 'i64'],
      ['jobPrice', 'u64'],
      ['jobTimeout', 'i64'],
      ['jobType', 'u8'],
      ['nodeXnosMinimum', 'u128'],
    ],
  },
  update: {
    accounts: [
      ['market', true, false],
      ['accessKey', false, false],
      ['authority', false, true],
    ],
    args: [
      ['jobExpiration', 'i64'],
      ['jobPrice', 'u64'],
      ['jobType', 'u8'],
      ['nodeStakeMinimum', 'u128'],
      ['jobTimeout', 'i64'],
    ],
  },
  close: CLOSE_MARKET,
  closeAdmin: CLOSE_MARKET,
  assign: {
    accounts: [
      ['job', true, true],
      ['market', true, false],
      ['run', true, true],
      ['node', false, false],
      ['user', true, false],
      ['vault', true, false],
      ['payer', true, true],
      ['rewardsReflection', true, false],
      ['rewardsVault', true, false],
      ['authority', false, true],
      ['rewardsProgram', false, false],
      ['tokenProgram', false, false],
      ['systemProgram', false, false],
    ],
    args: [
      ['ipfsJob', 'bytes32'],
      ['timeout', 'i64'],
    ],
  },
  list: {
    accounts: [
      ['job', true, true],
      ['market', true, false],
      ['run', true, true],
      ['user', true, false],
      ['vault', true, false],
      ['payer', true, true],
      ['rewardsReflection', true, false],
      ['rewardsVault', true, false],
      ['authority', false, true],
      ['rewardsProgram', false, false],
      ['tokenProgram', false, false],
      ['systemProgram', false, false],
    ],
    args: [
      ['ipfsJob', 'bytes32'],
      ['timeout', 'i64'],
    ],
  },
  delist: {
    accounts: [
      ['job', true, false],
      ['market', true, false],
      ['deposit', true, false],
      ['payer', true, false],
      ['vault', true, false],
      ['tokenProgram', false, false],
      ['authority', true, true],
    ],
    args: [],
  },
  recover: {
    accounts: [
      ['job', true, false],
      ['market', false, false],
      ['vault', true, false],
      ['user', true, false],
      ['payer', true, false],
      ['authority', false, true],
      ['tokenProgram', false, false],
    ],
    args: [],
  },
  extend: {
    accounts: [
      ['job', true, false],
      ['market', false, false],
      ['user', true, false],
      ['vault', true, false],
      ['rewardsReflection', true, false],
      ['rewardsVault', true, false],
      ['authority', false, true],
      ['payer', false, true],
      ['rewardsProgram', false, false],
      ['tokenProgram', false, false],
    ],
    args: [['timeout', 'i64']],
  },
  end: {
    accounts: [
      ['job', true, false],
      ['market', false, false],
      ['run', true, false],
      ['deposit', true, false],
      ['user', true, false],
      ['vault', true, false],
      ['payer', true, false],
      ['authority', true, true],
      ['tokenProgram', false, false],
    ],
    args: [],
  },
  work: {
    accounts: [
      ['run', true, true],
      ['market', true, false],
      ['payer', true, true],
      ['stake', false, false],
      ['nft', false, false],
      ['metadata', false, false],
      ['authority', false, true],
      ['systemProgram', false, false],
    ],
    args: [],
  },
  stop: {
    accounts: [
      ['market', true, false],
      ['node', false, false],
      ['authority', false, true],
    ],
    args: [],
  },
  claim: {
    accounts: [
      ['job', true, false],
      ['run', true, true],
      ['market', false, false],
      ['stake', false, false],
      ['nft', false, false],
      ['metadata', false, false],
      ['payer', true, true],
      ['authority', false, true],
      ['systemProgram', false, false],
    ],
    args: [],
  },
  complete: {
    accounts: [
      ['job', true, false],
      ['authority', false, true],
    ],
    args: [['ipfsResult', 'bytes32']],
  },
  finish: {
    accounts: [
      ['job', true, false],
      ['run', true, false],
      ['market', false, false],
      ['vault', true, false],
      ['deposit', true, false],
      ['user', true, false],
      ['payerJob', true, false],
      ['payerRun', true, false],
      ['project', true, false],
      ['authority', false, true],
      ['tokenProgram', false, false],
    ],
    args: [['ipfsResult', 'bytes32']],
  },
  quit: {
    accounts: [
      ['job', true, false],
      ['run', true, false],
      ['payer', true, false],
      ['authority', false, true],
    ],
    args: [],
  },
  quitAdmin: {
    accounts: [
      ['run', true, false],
      ['payer', true, false],
      ['authority', false, true],
    ],
    args: [],
  },
  clean: {
    accounts: [
      ['job', true, false],
      ['market', false, false],
      ['payer', true, false],
    ],
    args: [],
  },
  cleanAdmin: {
    accounts: [
      ['job', true, false],
      ['payer', true, false],
      ['authority', false, true],
    ],
    args: [],
  },
} as const satisfies Record<string, {accounts: readonly AccountSpec[]; args: readonly (readonly [string, ArgType])[]}>

export type JobsInstructionName = keyof typeof SPECS
type Spec<N extends JobsInstructionName> = (typeof SPECS)[N]
type ArgValue<T extends ArgType> = T extends 'u8' ? number : T extends 'bytes32' ? Uint8Array : bigint

/** The named accounts an instruction takes, e.g. `{job, market, run, ...}` for `list`. */
export type JobsInstructionAccounts<N extends JobsInstructionName> = {[K in Spec<N>['accounts'][number][0]]: PublicKey}
/** The arguments an instruction takes, e.g. `{ipfsJob, timeout}` for `list`. */
export type JobsInstructionArgs<N extends JobsInstructionName> = {
  [A in Spec<N>['args'][number] as A[0]]: ArgValue<A[1]>
}

const NAMES = Object.keys(SPECS) as JobsInstructionName[]
const BY_DISCRIMINATOR = new Map(NAMES.map((name) => [instructionDiscriminator(name).toString('hex'), name]))

/** The IDL's account list of an instruction: names in order with their writable and signer flags. */
export function instructionAccountSpecs(name: JobsInstructionName): readonly AccountSpec[] {
  return SPECS[name].accounts
}

/** Encodes an instruction's data: discriminator then Borsh arguments. */
export function encodeJobsInstructionData<N extends JobsInstructionName>(
  name: N,
  args: JobsInstructionArgs<N>,
): Buffer {
  const w = new BorshWriter().fixed(instructionDiscriminator(name), 8)
  const values = args as Record<string, unknown>
  for (const [arg, type] of SPECS[name].args as readonly (readonly [string, ArgType])[]) {
    const v = values[arg]
    if (type === 'u8') w.u8(v as number)
    else if (type === 'bytes32') w.fixed(v as Uint8Array, 32)
    else if (type === 'u128') w.u128(v as bigint)
    else if (type === 'u64') w.u64(v as bigint)
    else w.i64(v as bigint)
  }
  return w.bytes()
}

/** A decoded instruction: its name and arguments, or null when the discriminator is not one of the program's. */
export type DecodedJobsInstruction = {
  [N in JobsInstructionName]: {name: N; args: JobsInstructionArgs<N>}
}[JobsInstructionName]

/** Decodes an instruction's data; throws RangeError when the arguments are truncated. */
export function decodeJobsInstructionData(data: Uint8Array): DecodedJobsInstruction | null {
  if (data.length < 8) return null
  const name = BY_DISCRIMINATOR.get(Buffer.from(data.subarray(0, 8)).toString('hex'))
  if (!name) return null
  const r = new BorshReader(data, 8)
  const args: Record<string, unknown> = {}
  for (const [arg, type] of SPECS[name].args as readonly (readonly [string, ArgType])[]) {
    if (type === 'u8') args[arg] = r.u8()
    else if (type === 'bytes32') args[arg] = r.fixed(32)
    else if (type === 'u128') args[arg] = r.u128()
    else if (type === 'u64') args[arg] = r.u64()
    else args[arg] = r.i64()
  }
  return {name, args} as DecodedJobsInstruction
}

/** Builds a jobs program instruction with the IDL's account order and flags. */
export function jobsInstruction<N extends JobsInstructionName>(
  programId: PublicKey,
  name: N,
  accounts: JobsInstructionAccounts<N>,
  args: JobsInstructionArgs<N>,
): TransactionInstruction {
  const named = accounts as Record<string, PublicKey>
  return new TransactionInstruction({
    programId,
    keys: SPECS[name].accounts.map(([account, isWritable, isSigner]) => ({
      pubkey: named[account]!,
      isSigner,
      isWritable,
    })),
    data: encodeJobsInstructionData(name, args),
  })
}

/** Builds a `list` instruction: posts a job to a market, depositing `price * timeout` tokens into its vault. */
export function encodeListInstruction(
  programId: PublicKey,
  accounts: JobsInstructionAccounts<'list'>,
  args: JobsInstructionArgs<'list'>,
): TransactionInstruction {
  return jobsInstruction(programId, 'list', accounts, args)
}
