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

/**
 * Each instruction's accounts in the IDL's order (`:w` writable, `:s` signer) and its arguments (`name:type`):
 * compact enough to read against the IDL it copies (test/lib/market/codecs.test.ts checks it against the IDL).
 */
const SPECS = {
  open: {
    accounts: 'mint market:ws vault:w authority:ws accessKey rent systemProgram tokenProgram',
    args: 'jobExpiration:i64 jobPrice:u64 jobTimeout:i64 jobType:u8 nodeXnosMinimum:u128',
  },
  update: {
    accounts: 'market:w accessKey authority:s',
    args: 'jobExpiration:i64 jobPrice:u64 jobType:u8 nodeStakeMinimum:u128 jobTimeout:i64',
  },
  close: {accounts: 'market:w vault:w user:w authority:s tokenProgram', args: ''},
  closeAdmin: {accounts: 'market:w vault:w user:w authority:s tokenProgram', args: ''},
  assign: {
    accounts:
      'job:ws market:w run:ws node user:w vault:w payer:ws rewardsReflection:w rewardsVault:w authority:s rewardsProgram tokenProgram systemProgram',
    args: 'ipfsJob:bytes32 timeout:i64',
  },
  list: {
    accounts:
      'job:ws market:w run:ws user:w vault:w payer:ws rewardsReflection:w rewardsVault:w authority:s rewardsProgram tokenProgram systemProgram',
    args: 'ipfsJob:bytes32 timeout:i64',
  },
  delist: {accounts: 'job:w market:w deposit:w payer:w vault:w tokenProgram authority:ws', args: ''},
  recover: {accounts: 'job:w market vault:w user:w payer:w authority:s tokenProgram', args: ''},
  extend: {
    accounts:
      'job:w market user:w vault:w rewardsReflection:w rewardsVault:w authority:s payer:s rewardsProgram tokenProgram',
    args: 'timeout:i64',
  },
  end: {accounts: 'job:w market run:w deposit:w user:w vault:w payer:w authority:ws tokenProgram', args: ''},
  work: {accounts: 'run:ws market:w payer:ws stake nft metadata authority:s systemProgram', args: ''},
  stop: {accounts: 'market:w node authority:s', args: ''},
  claim: {accounts: 'job:w run:ws market stake nft metadata payer:ws authority:s systemProgram', args: ''},
  complete: {accounts: 'job:w authority:s', args: 'ipfsResult:bytes32'},
  // The deployed program takes payer_run before payer_job and no project (jobs-program-constraints.md 4.14);
  // the IDL's order is refused on chain.
  finish: {
    accounts: 'job:w run:w market vault:w deposit:w user:w payerRun:w payerJob:w authority:s tokenProgram',
    args: 'ipfsResult:bytes32',
  },
  quit: {accounts: 'job:w run:w payer:w authority:s', args: ''},
  quitAdmin: {accounts: 'run:w payer:w authority:s', args: ''},
  clean: {accounts: 'job:w market payer:w', args: ''},
  cleanAdmin: {accounts: 'job:w payer:w authority:s', args: ''},
} as const

type Spec<N extends JobsInstructionName> = (typeof SPECS)[N]
/** The names in a space-separated spec, flags dropped: 'job:ws market:w' → 'job' | 'market'. */
type SpecNames<S extends string> = S extends `${infer Head} ${infer Rest}`
  ? SpecNames<Head> | SpecNames<Rest>
  : S extends `${infer Name}:${string}`
    ? Name
    : S extends ''
      ? never
      : S
/** The arguments in a spec with their TypeScript types: 'timeout:i64' → {timeout: bigint}. */
type SpecArgs<S extends string> = S extends `${infer Head} ${infer Rest}`
  ? SpecArgs<Head> & SpecArgs<Rest>
  : S extends `${infer Name}:${infer Type extends ArgType}`
    ? {[K in Name]: ArgValue<Type>}
    : unknown
type ArgValue<T extends ArgType> = T extends 'u8' ? number : T extends 'bytes32' ? Uint8Array : bigint

export type JobsInstructionName = keyof typeof SPECS
/** The named accounts an instruction takes, e.g. `{job, market, run, ...}` for `list`. */
export type JobsInstructionAccounts<N extends JobsInstructionName> = {[K in SpecNames<Spec<N>['accounts']>]: PublicKey}
/** The arguments an instruction takes, e.g. `{ipfsJob, timeout}` for `list`. */
export type JobsInstructionArgs<N extends JobsInstructionName> = {
  [K in keyof SpecArgs<Spec<N>['args']>]: SpecArgs<Spec<N>['args']>[K]
}

const NAMES = Object.keys(SPECS) as JobsInstructionName[]
const BY_DISCRIMINATOR = new Map(NAMES.map((name) => [instructionDiscriminator(name).toString('hex'), name]))
const ACCOUNTS = new Map(
  NAMES.map((name) => [
    name,
    SPECS[name].accounts.split(' ').map((entry): AccountSpec => {
      const [account, flags = ''] = entry.split(':')
      return [account!, flags.includes('w'), flags.includes('s')]
    }),
  ]),
)
const ARGS = new Map(
  NAMES.map((name) => [
    name,
    SPECS[name].args
      .split(' ')
      .filter(Boolean)
      .map((entry) => entry.split(':') as [string, ArgType]),
  ]),
)

/** The IDL's account list of an instruction: names in order with their writable and signer flags. */
export function instructionAccountSpecs(name: JobsInstructionName): readonly AccountSpec[] {
  return ACCOUNTS.get(name)!
}

/** Encodes an instruction's data: discriminator then Borsh arguments. */
export function encodeJobsInstructionData<N extends JobsInstructionName>(
  name: N,
  args: JobsInstructionArgs<N>,
): Buffer {
  const w = new BorshWriter().fixed(instructionDiscriminator(name), 8)
  const values = args as Record<string, unknown>
  for (const [arg, type] of ARGS.get(name)!) {
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
  for (const [arg, type] of ARGS.get(name)!) {
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
    keys: instructionAccountSpecs(name).map(([account, isWritable, isSigner]) => ({
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
