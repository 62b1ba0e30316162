/** Runs one jobs program instruction: decodes it with the shared codecs, checks its accounts, calls its handler. */
import type {PublicKey} from '@solana/web3.js'

import {decodeJobsInstructionData, instructionAccountSpecs} from '../../market/instructions.js'
import type {Overlay} from '../ledger.js'
import {JobsContext, type InstructionAccount} from './context.js'
import {AnchorError, fail, InstructionFailure} from './errors.js'
import {HANDLERS} from './handlers.js'

export interface JobsInstructionInput {
  programId: PublicKey
  accounts: InstructionAccount[]
  data: Uint8Array
  ledger: Overlay
  now: bigint
  rentExempt: (size: number) => bigint
  log: (line: string) => void
}

/** Executes the instruction against the overlay; throws InstructionFailure with the program's error code. */
export function executeJobsInstruction(input: JobsInstructionInput): void {
  let decoded
  try {
    decoded = decodeJobsInstructionData(input.data)
  } catch {
    fail(AnchorError.InstructionDidNotDeserialize, 'the instruction arguments do not deserialize')
  }
  if (!decoded) fail(AnchorError.InstructionFallbackNotFound, 'unknown instruction')
  const title = decoded.name[0]!.toUpperCase() + decoded.name.slice(1)
  input.log(`Program log: Instruction: ${title}`)
  const handler = HANDLERS[decoded.name] as ((ctx: JobsContext, args: unknown) => void) | undefined
  if (!handler) {
    throw new InstructionFailure(
      'InvalidInstructionData',
      `instruction ${decoded.name} is not emulated by the localnet`,
    )
  }
  const specs = instructionAccountSpecs(decoded.name)
  if (input.accounts.length < specs.length)
    fail(AnchorError.AccountNotEnoughKeys, 'not enough account keys given to the instruction')
  const named = new Map<string, InstructionAccount>()
  specs.forEach(([name, writable, signer], i) => {
    const account = input.accounts[i]!
    if (signer && !account.isSigner)
      fail(AnchorError.AccountNotSigner, `${name}: the account must sign the transaction`)
    if (writable && !account.isWritable) fail(AnchorError.ConstraintMut, `${name}: the account must be writable`)
    named.set(name, account)
  })
  handler(new JobsContext(input.programId, input.ledger, named, input.now, input.rentExempt, input.log), decoded.args)
}
