/** Posting a job: pricing it on its market, checking the wallet covers it, uploading the definition and `list`. */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token'
import {type Keypair, type PublicKey, SystemProgram, type TransactionInstruction} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../../errors.js'
import {generateKeypair, type Wallet} from '../../keys/wallet.js'
import {JOB_ACCOUNT_SIZE, type MarketAccount, RUN_ACCOUNT_SIZE} from '../codec/accounts.js'
import {type Balances, checkFunds, readBalances} from '../rpc/balances.js'
import type {MarketNetwork} from '../connect.js'
import {jobsInstruction} from '../codec/instructions.js'
import {ipfsHashToBytes} from '../codec/ipfs-hash.js'
import {readMarket} from './jobs.js'
import {findVaultAddress} from '../codec/pda.js'
import {inFlight, rpcCall} from '../rpc/rpc.js'
import {type FeeQuote, prepareTransaction, type PreparedTransaction, sendPrepared} from '../rpc/send.js'

/** Bytes of an SPL token account, for the rent of an associated token account created on the way. */
const TOKEN_ACCOUNT_SIZE = 165

/** What a post will cost, known before anything is uploaded or sent. */
export interface PostQuote {
  market: PublicKey
  marketAccount: MarketAccount
  /** Seconds. */
  timeout: bigint
  /** Token base units per second. */
  pricePerSecond: bigint
  /** Token base units: price per second x timeout. */
  total: bigint
  /** Lamports of the rent of the job account and of the run account `list` creates when a node is waiting. */
  rent: bigint
  balances: Balances
  /** The transaction fee (base and priority), from a simulation of the `list`. */
  fee: FeeQuote
  /** The definition's CIDv0, computed locally: what the `list` names and the upload must answer. */
  cid: string
  /** The simulated transaction: its budget, signers (payer, job, run) and instructions. */
  transaction: PreparedTransaction
}

/**
 * Prices a job on its market, simulates its `list` of `cid` (the definition's CIDv0, computed locally) and checks
 * the wallet can pay deposit, rent and fee: exits 4 before anything is uploaded or sent. Checks first that the
 * definition has somewhere to be uploaded (exit 2).
 */
export async function quotePost(
  net: MarketNetwork,
  wallet: Wallet,
  market: PublicKey,
  cid: string,
  timeout?: bigint,
): Promise<PostQuote> {
  net.content().requireUploader()
  // The reads go out together; their failures are reported in this order.
  const reads = {
    market: inFlight(readMarket(net.connection, net.programId, market)),
    balances: inFlight(rpcCall(net.connection, () => readBalances(net.connection, wallet.publicKey, net.mint))),
    // The job account, the run account `list` creates when a node is already waiting, and a token account.
    rents: inFlight(
      rpcCall(net.connection, () =>
        Promise.all(
          [JOB_ACCOUNT_SIZE, RUN_ACCOUNT_SIZE, TOKEN_ACCOUNT_SIZE].map((size) =>
            net.connection.getMinimumBalanceForRentExemption(size),
          ),
        ),
      ),
    ),
  }
  const marketAccount = await reads.market
  checkVault(net, market, marketAccount)
  const duration = timeout ?? marketAccount.jobTimeout
  if (duration <= 0n) {
    throw new GpunetError('invalid_timeout', 'the timeout must be a positive number of seconds', {
      exitCode: ExitCode.USAGE,
    })
  }
  const total = marketAccount.jobPrice * duration
  const balances = await reads.balances
  const payer = wallet.keypair()
  const signers = [payer, generateKeypair(), generateKeypair()]
  // A free market checks no token account owner, but `user` must still be a token account: the payer's, made now.
  const createAta = marketAccount.jobPrice === 0n && !balances.hasTokenAccount
  const [jobRent, runRent, tokenAccountRent] = await reads.rents
  const rent = BigInt(jobRent!) + BigInt(runRent!) + (createAta ? BigInt(tokenAccountRent!) : 0n)
  checkFunds(balances, {tokens: total, lamports: rent})
  const list = listInstruction(net, signers, market, marketAccount, balances, duration, ipfsHashToBytes(cid))
  const transaction = await prepareTransaction(
    net.connection,
    createAta ? [ataInstruction(net, payer.publicKey), list] : [list],
    signers,
    net.fees,
  )
  checkFunds(balances, {tokens: total, lamports: rent + transaction.fee.lamports})
  return {
    market,
    marketAccount,
    timeout: duration,
    pricePerSecond: marketAccount.jobPrice,
    total,
    rent,
    balances,
    fee: transaction.fee,
    cid,
    transaction,
  }
}

/**
 * Posts a job once its definition is uploaded: the quoted `list`, with its fresh job key, so it posts once. Returns
 * the job, and the run account the `list` named (created only when a node was waiting).
 */
export async function listJob(
  net: MarketNetwork,
  quote: PostQuote,
): Promise<{job: PublicKey; run: PublicKey; signature: string; fee: FeeQuote}> {
  const {transaction} = quote
  const signature = await sendPrepared(net.connection, transaction)
  const [, job, run] = transaction.signers
  return {job: job!.publicKey, run: run!.publicKey, signature, fee: transaction.fee}
}

/** The market's vault must be the PDA of [market, mint]: else the market is not one of this network's token. */
function checkVault(net: MarketNetwork, market: PublicKey, account: MarketAccount): void {
  const [expected] = findVaultAddress(net.programId, market, net.mint)
  if (account.vault.equals(expected)) return
  throw new GpunetError(
    'market_vault_mismatch',
    `market ${market.toBase58()} keeps its deposits in ${account.vault.toBase58()}, not in the vault of ${net.name}'s payment token (${expected.toBase58()})`,
    {
      exitCode: ExitCode.USAGE,
      hint: 'check --market and --network: this market does not take this network’s token',
      fields: {market: market.toBase58(), vault: account.vault.toBase58(), expectedVault: expected.toBase58()},
    },
  )
}

/** Creates the owner's associated token account of the payment token unless it exists (an idempotent instruction). */
export function ataInstruction(net: MarketNetwork, owner: PublicKey, payer = owner): TransactionInstruction {
  const ata = getAssociatedTokenAddressSync(net.mint, owner, true)
  return createAssociatedTokenAccountIdempotentInstruction(payer, ata, owner, net.mint)
}

/** The `list` of the quoted job: payer (also its project), job and run keys as signed. */
function listInstruction(
  net: MarketNetwork,
  [payer, job, run]: Keypair[],
  market: PublicKey,
  marketAccount: MarketAccount,
  balances: Balances,
  timeout: bigint,
  ipfsJob: Uint8Array,
): TransactionInstruction {
  return jobsInstruction(
    net.programId,
    'list',
    {
      job: job!.publicKey,
      market,
      run: run!.publicKey,
      user: balances.tokenAccount,
      vault: marketAccount.vault,
      payer: payer!.publicKey,
      ...net.rewards(),
      authority: payer!.publicKey,
      tokenProgram: TOKEN_PROGRAM_ID,
      systemProgram: SystemProgram.programId,
    },
    {ipfsJob, timeout},
  )
}
