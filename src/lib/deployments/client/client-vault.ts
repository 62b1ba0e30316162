/**
 * The owner's side of a deployment's vault: funding it from the wallet (SOL and payment tokens, one transaction),
 * and withdrawing it, where the manager answers a transaction its vault signed and the owner co-signs as fee payer.
 * That transaction is a stranger's: before the wallet signs it, every instruction must move funds from the vault
 * to the owner and nothing else (a wallet signature would authorize anything else it held).
 */
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token'
import {ComputeBudgetProgram, PublicKey, SystemProgram, VersionedTransaction} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../../errors.js'
import {formatAmount} from '../../text/amounts.js'
import {type Balances, readBalances, SOL_DECIMALS} from '../../market/rpc/balances.js'
import type {MarketNetwork} from '../../market/connect.js'
import {TOKEN_DECIMALS} from '../../market/networks.js'
import {rpcCall} from '../../market/rpc/rpc.js'
import {type FeeQuote, sendJobsTransaction, sendSigned} from '../../market/rpc/send.js'
import type {Wallet} from '../../keys/wallet.js'
import type {DeploymentClient} from './client.js'

/** Blocks a blockhash stays valid for (the runtime's MAX_PROCESSING_AGE). */
const BLOCKHASH_LIFETIME = 150

/** SOL kept aside for the fee and a token account's rent when checking the wallet covers a funding. */
const FUND_FEE_MARGIN = 3_000_000n

/** What `deployment fund` sent and the vault's balances after it. */
export interface Funded {
  signature: string
  fee: FeeQuote
  vault: Balances
}

/** Sends `lamports` and `tokens` from the wallet to the vault in one transaction; exit 4 when the wallet lacks them. */
export async function fundVault(
  net: MarketNetwork,
  wallet: Wallet,
  vault: PublicKey,
  amounts: {lamports: bigint; tokens: bigint},
): Promise<Funded> {
  const own = await rpcCall(net.connection, () => readBalances(net.connection, wallet.publicKey, net.mint))
  const short: string[] = []
  if (own.tokens < amounts.tokens) short.push(`${formatAmount(own.tokens, TOKEN_DECIMALS)} tokens`)
  if (own.lamports < amounts.lamports + FUND_FEE_MARGIN) short.push(`${formatAmount(own.lamports, SOL_DECIMALS)} SOL`)
  if (short.length > 0) {
    throw new GpunetError(
      'insufficient_balance',
      `the wallet holds ${short.join(' and ')}: not enough to send ${formatAmount(amounts.lamports, SOL_DECIMALS)} SOL and ${formatAmount(amounts.tokens, TOKEN_DECIMALS)} tokens (plus the fee)`,
      {
        exitCode: ExitCode.INSUFFICIENT_BALANCE,
        hint: 'nothing was sent; fund the wallet (on localnet: `gpunet localnet fund`) or send less',
        fields: {lamports: String(own.lamports), tokens: String(own.tokens)},
      },
    )
  }
  const instructions = []
  if (amounts.lamports > 0n) {
    instructions.push(
      SystemProgram.transfer({fromPubkey: wallet.publicKey, toPubkey: vault, lamports: amounts.lamports}),
    )
  }
  if (amounts.tokens > 0n) {
    const target = getAssociatedTokenAddressSync(net.mint, vault, true)
    instructions.push(
      createAssociatedTokenAccountIdempotentInstruction(wallet.publicKey, target, vault, net.mint),
      createTransferCheckedInstruction(
        own.tokenAccount,
        net.mint,
        target,
        wallet.publicKey,
        amounts.tokens,
        TOKEN_DECIMALS,
      ),
    )
  }
  const {signature, fee} = await sendJobsTransaction(net.connection, instructions, [wallet.keypair()], net.fees)
  const after = await rpcCall(net.connection, () => readBalances(net.connection, vault, net.mint))
  return {signature, fee, vault: after}
}

/** What a withdraw transaction moves to the owner, as read from its instructions before signing. */
export interface WithdrawPlan {
  lamports: bigint
  tokens: bigint
  /** The vault's token accounts it closes: their rent comes to the owner too. */
  closes: PublicKey[]
}

/**
 * Reads the manager's withdraw transaction (base64) and refuses it (exit 5) unless the owner is its fee payer and
 * every instruction moves the vault's SOL or tokens to the owner, creates the owner's token account, closes the
 * vault's (its rent to the owner), or sets a compute budget whose priority fee stays under `maxPriorityFeeLamports`.
 */
export function checkWithdraw(
  base64: string,
  owner: PublicKey,
  vault: PublicKey,
  mint: PublicKey,
  maxPriorityFeeLamports: bigint,
): {transaction: VersionedTransaction; plan: WithdrawPlan} {
  checkVaultIsNotOwner(vault, owner)
  let transaction: VersionedTransaction
  try {
    transaction = VersionedTransaction.deserialize(Buffer.from(base64, 'base64'))
  } catch {
    throw refused('is not a Solana transaction')
  }
  const {message} = transaction
  if (message.addressTableLookups.length > 0) throw refused('reads address lookup tables, which gpunet cannot check')
  const keys = message.staticAccountKeys
  if (!keys[0]?.equals(owner)) throw refused(`has ${keys[0]?.toBase58() ?? 'no one'} as its fee payer, not your wallet`)
  const signers = keys.slice(0, message.header.numRequiredSignatures)
  if (!signers.every((key) => key.equals(owner) || key.equals(vault))) {
    throw refused('needs a signature from someone other than your wallet and the vault')
  }
  const ownerTokens = getAssociatedTokenAddressSync(mint, owner, true)
  const plan: WithdrawPlan = {lamports: 0n, tokens: 0n, closes: []}
  let unitLimit: bigint | null = null
  let unitPrice = 0n
  for (const instruction of message.compiledInstructions) {
    const program = keys[instruction.programIdIndex]
    const accounts = instruction.accountKeyIndexes.map((index) => keys[index])
    if (accounts.some((account) => account === undefined) || !program)
      throw refused('names an account it does not list')
    const data = Buffer.from(instruction.data)
    const at = (i: number) => accounts[i] as PublicKey
    if (program.equals(SystemProgram.programId)) {
      // Transfer: u32 2, then u64 lamports; accounts [from, to].
      if (data.length !== 12 || data.readUInt32LE(0) !== 2 || !at(0).equals(vault) || !at(1).equals(owner)) {
        throw refused('has a system instruction other than a transfer from the vault to your wallet')
      }
      plan.lamports += data.readBigUInt64LE(4)
    } else if (program.equals(TOKEN_PROGRAM_ID) && data[0] === 9 && data.length === 1) {
      // CloseAccount (9: [account, destination, authority]): the vault's emptied token account, its rent to the owner.
      if (!at(1).equals(owner) || !at(2).equals(vault)) {
        throw refused("closes a token account other than the vault's, or sends its rent elsewhere than your wallet")
      }
      plan.closes.push(at(0))
    } else if (program.equals(TOKEN_PROGRAM_ID)) {
      // Transfer (3: [source, destination, authority]) or TransferChecked (12: [source, mint, destination, authority]).
      const checked = data[0] === 12 && data.length === 10 && at(1).equals(mint)
      const plain = data[0] === 3 && data.length === 9
      const destination = checked ? at(2) : at(1)
      const authority = checked ? at(3) : at(2)
      if (!(checked || plain) || !authority?.equals(vault) || !destination?.equals(ownerTokens)) {
        throw refused('has a token instruction other than a transfer from the vault to your token account')
      }
      plan.tokens += data.readBigUInt64LE(1)
    } else if (program.equals(ASSOCIATED_TOKEN_PROGRAM_ID)) {
      // Create (no data or 0) or CreateIdempotent (1): [payer, account, owner, mint, system, token].
      const kind = data.length === 0 ? 0 : data.length === 1 ? data[0] : -1
      if ((kind !== 0 && kind !== 1) || !at(1).equals(ownerTokens) || !at(2).equals(owner) || !at(3).equals(mint)) {
        throw refused('creates a token account other than your own')
      }
    } else if (program.equals(ComputeBudgetProgram.programId)) {
      // SetComputeUnitLimit (2, u32) and SetComputeUnitPrice (3, u64 micro-lamports): the owner pays the price.
      if (data[0] === 2 && data.length === 5) unitLimit = BigInt(data.readUInt32LE(1))
      else if (data[0] === 3 && data.length === 9) unitPrice = data.readBigUInt64LE(1)
      else throw refused('has a compute budget instruction gpunet does not know')
    } else {
      throw refused(`calls the program ${program.toBase58()}, which a withdraw has no use for`)
    }
  }
  const units = unitLimit ?? BigInt(200_000 * message.compiledInstructions.length)
  if ((unitPrice * units) / 1_000_000n > maxPriorityFeeLamports) {
    throw refused('asks your wallet for a priority fee above --max-priority-fee')
  }
  return {transaction, plan}
}

/**
 * Refuses (exit 5) a vault that is the owner's own wallet: every transfer "from the vault to your wallet" would then
 * be from the wallet to itself, signed by the wallet alone, moving nothing but the fee while reading as a withdraw.
 */
export function checkVaultIsNotOwner(vault: PublicKey, owner: PublicKey): void {
  if (vault.equals(owner)) {
    throw refused(
      `names your own wallet ${owner.toBase58()} as the vault: a transfer from it to you moves nothing but the fee`,
    )
  }
}

/**
 * Co-signs a checked withdraw transaction with the wallet and sends it until confirmed. Its blockhash is the
 * manager's, whose last valid height gpunet is not told: the current height plus a blockhash's 150 blocks bounds it.
 */
export async function sendWithdraw(
  net: MarketNetwork,
  wallet: Wallet,
  transaction: VersionedTransaction,
): Promise<string> {
  transaction.sign([wallet.keypair()])
  const raw = Buffer.from(transaction.serialize())
  const height = await rpcCall(net.connection, () => net.connection.getBlockHeight('confirmed'))
  const signature = await sendSigned(net.connection, raw, height + BLOCKHASH_LIFETIME)
  if (signature) return signature
  throw new GpunetError('transaction_expired', 'the withdraw was not confirmed before its blockhash expired', {
    exitCode: ExitCode.UNAVAILABLE,
    hint: 'nothing was moved: run `gpunet deployment withdraw` again for a fresh transaction',
  })
}

function refused(why: string): GpunetError {
  return new GpunetError('withdraw_refused', `not signing the manager's withdraw transaction: it ${why}`, {
    exitCode: ExitCode.UNAVAILABLE,
    hint: 'nothing was signed or sent; a manager that sends this is not one to trust with funds',
  })
}

/** The deployments of the owner's besides `except` that pay from the same vault (the owner's shared vault's others). */
export async function vaultSharers(client: DeploymentClient, vault: string, except: string): Promise<string[]> {
  const ids: string[] = []
  let cursor: string | undefined
  // Pages of 100 until the manager has no next one (a bound, so a manager answering a cursor forever ends).
  for (let page = 0; page < 100; page += 1) {
    const {deployments, pagination} = await client.list({vault, limit: 100, ...(cursor ? {cursor} : {})})
    ids.push(...deployments.filter((d) => d.vault === vault && d.id !== except).map((d) => d.id))
    cursor = pagination.cursor_next ?? undefined
    if (!cursor) break
  }
  return [...new Set(ids)]
}

/** How a command names a vault and its other deployments: "its own" or "shared with N other deployments: ...". */
export function sharedText(sharers: readonly string[]): string {
  if (sharers.length === 0) return 'no other deployment pays from it'
  const shown = sharers.slice(0, 10).join(', ')
  const more = sharers.length > 10 ? ` and ${sharers.length - 10} more` : ''
  return `shared with ${sharers.length} other deployment${sharers.length === 1 ? '' : 's'}: ${shown}${more}`
}
