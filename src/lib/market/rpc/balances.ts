/** The wallet's SOL and payment token balances, and the check that they cover a payment before anything is sent. */
import {AccountLayout, ACCOUNT_SIZE, getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import type {AccountInfo, Connection, PublicKey} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../../errors.js'
import {formatAmount} from '../../text/amounts.js'
import {TOKEN_DECIMALS} from '../networks.js'

/** Lamports per SOL, as decimals. */
export const SOL_DECIMALS = 9
/** The fee of one signature (lamports). */
export const SIGNATURE_FEE = 5000n

export interface Balances {
  lamports: bigint
  /** Token base units in the wallet's associated token account (0 when it has none). */
  tokens: bigint
  tokenAccount: PublicKey
  /** Whether the associated token account exists. */
  hasTokenAccount: boolean
}

/** Reads the SOL and payment token balances of a wallet: both accounts in one request. */
export async function readBalances(connection: Connection, owner: PublicKey, mint: PublicKey): Promise<Balances> {
  const tokenAccount = getAssociatedTokenAddressSync(mint, owner, true)
  const [wallet, token] = await connection.getMultipleAccountsInfo([owner, tokenAccount])
  return {
    lamports: BigInt(wallet?.lamports ?? 0),
    tokens: token ? tokenAmount(token) : 0n,
    tokenAccount,
    hasTokenAccount: token !== null,
  }
}

/** The amount an SPL token account holds, read from its data; 0 for an account of another kind. */
export function tokenAmount(account: AccountInfo<Buffer>): bigint {
  if (!account.owner.equals(TOKEN_PROGRAM_ID) || account.data.length < ACCOUNT_SIZE) return 0n
  return AccountLayout.decode(account.data).amount
}

/** Exits 4 at once, saying what is there and what is needed, when the balances do not cover a payment. */
export function checkFunds(balances: Balances, need: {lamports: bigint; tokens: bigint}): void {
  const short: string[] = []
  if (balances.tokens < need.tokens) {
    short.push(`${fmtTokens(balances.tokens)} tokens, ${fmtTokens(need.tokens)} tokens needed`)
  }
  if (balances.lamports < need.lamports) {
    short.push(
      `${formatAmount(balances.lamports, SOL_DECIMALS)} SOL, ${formatAmount(need.lamports, SOL_DECIMALS)} SOL needed for fees and rent`,
    )
  }
  if (short.length === 0) return
  throw new GpunetError('insufficient_balance', `the wallet cannot pay for this job: it has ${short.join('; ')}`, {
    exitCode: ExitCode.INSUFFICIENT_BALANCE,
    hint: 'fund the wallet (on localnet: `gpunet localnet fund`), or choose a shorter --timeout',
    // Base units as strings: exact, as in the `baseUnits` of amounts.
    fields: {
      tokens: String(balances.tokens),
      tokensNeeded: String(need.tokens),
      lamports: String(balances.lamports),
      lamportsNeeded: String(need.lamports),
    },
  })
}

/** Token base units as a decimal number of tokens. */
export function fmtTokens(units: bigint): string {
  return formatAmount(units, TOKEN_DECIMALS)
}
