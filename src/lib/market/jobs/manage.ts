/** Stopping a job (delist a queued one, end a running one) and extending its timeout, as its project. */
import {getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import type {PublicKey, TransactionInstruction} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../../errors.js'
import type {Wallet} from '../../keys/wallet.js'
import {type AmountJson, amountJson} from '../../text/amounts.js'
import {type Balances, checkFunds, readBalances, SIGNATURE_FEE} from '../rpc/balances.js'
import type {MarketNetwork} from '../connect.js'
import {jobsInstruction} from '../codec/instructions.js'
import {isFinal, type JobView, readJob, readMarket} from './jobs.js'
import {TOKEN_DECIMALS} from '../networks.js'
import {ataInstruction} from './post.js'
import {rpcCall} from '../rpc/rpc.js'
import {
  type FeeJson,
  feeJson,
  type FeeQuote,
  prepareTransaction,
  type PreparedTransaction,
  sendJobsTransaction,
  sendPrepared,
} from '../rpc/send.js'

/** Reads a job its wallet may change: refuses a job of another project (6) or one already over (2). */
export async function readOwnJob(net: MarketNetwork, wallet: Wallet, address: PublicKey): Promise<JobView> {
  const view = await readJob(net.connection, net.programId, address)
  if (!view.job.project.equals(wallet.publicKey)) {
    throw new GpunetError(
      'not_your_job',
      `job ${address.toBase58()} was posted by ${view.job.project.toBase58()}, not by your wallet`,
      {
        exitCode: ExitCode.DENIED,
        hint: 'use the wallet that posted it (--wallet FILE)',
        fields: {job: address.toBase58(), project: view.job.project.toBase58()},
      },
    )
  }
  if (isFinal(view.status)) {
    throw new GpunetError('job_over', `job ${address.toBase58()} is already ${view.status}`, {
      exitCode: ExitCode.USAGE,
      fields: {job: address.toBase58(), state: view.status, status: view.status},
    })
  }
  return view
}

/**
 * Stops a job: `delist` when queued (the whole deposit comes back), `end` when running (the node is paid its time).
 * The program pays into associated token accounts that must exist: the node's (and the payer's) are created first
 * when missing, with the idempotent instruction, at the project's expense.
 */
export async function stopJob(
  net: MarketNetwork,
  wallet: Wallet,
  view: JobView,
): Promise<{signature: string; action: 'delist' | 'end'; fee: FeeQuote}> {
  const instructions = await stopInstructions(net, wallet, view)
  const {signature, fee} = await sendJobsTransaction(net.connection, instructions, [wallet.keypair()], net.fees)
  return {signature, action: view.run ? 'end' : 'delist', fee}
}

/**
 * The instructions that stop the job as `view` shows it: `end` with a run, else `delist` (which the program refuses
 * once a node has taken the job: the failover's signal), after any missing token account it pays into.
 */
export async function stopInstructions(
  net: MarketNetwork,
  wallet: Wallet,
  view: JobView,
): Promise<TransactionInstruction[]> {
  const market = await readMarket(net.connection, net.programId, view.job.market)
  const deposit = getAssociatedTokenAddressSync(net.mint, view.job.payer, true)
  const authority = wallet.keypair()
  const owners = view.run ? [view.job.payer, view.run.node] : [view.job.payer]
  const prepare = await missingTokenAccounts(net, owners)
  const ix = view.run
    ? jobsInstruction(
        net.programId,
        'end',
        {
          job: view.address,
          market: view.job.market,
          run: view.run.address,
          deposit,
          user: getAssociatedTokenAddressSync(net.mint, view.run.node, true),
          vault: market.vault,
          payer: view.run.payer,
          authority: authority.publicKey,
          tokenProgram: TOKEN_PROGRAM_ID,
        },
        {},
      )
    : jobsInstruction(
        net.programId,
        'delist',
        {
          job: view.address,
          market: view.job.market,
          deposit,
          payer: view.job.payer,
          vault: market.vault,
          tokenProgram: TOKEN_PROGRAM_ID,
          authority: authority.publicKey,
        },
        {},
      )
  return [...prepare.map((owner) => ataInstruction(net, owner, authority.publicKey)), ix]
}

/** The owners among `owners` whose associated token account of the payment token does not exist yet. */
async function missingTokenAccounts(net: MarketNetwork, owners: PublicKey[]): Promise<PublicKey[]> {
  const unique = [...new Map(owners.map((o) => [o.toBase58(), o])).values()]
  const infos = await rpcCall(net.connection, () =>
    net.connection.getMultipleAccountsInfo(unique.map((o) => getAssociatedTokenAddressSync(net.mint, o, true))),
  )
  return unique.filter((_, i) => infos[i] === null)
}

/** An extension, priced and simulated: the tokens it costs, the wallet's balances, the transaction and its fee. */
export interface ExtendQuote {
  /** The job's timeout when quoted, in seconds. */
  previousTimeout: bigint
  /** The new total timeout, in seconds. */
  timeout: bigint
  cost: bigint
  balances: Balances
  fee: FeeQuote
  transaction: PreparedTransaction
}

/** What an extension costs: price x (new timeout - current one), plus the fee; exits 4 when the wallet cannot pay. */
export async function quoteExtend(
  net: MarketNetwork,
  wallet: Wallet,
  view: JobView,
  timeout: bigint,
): Promise<ExtendQuote> {
  if (timeout <= view.job.timeout) {
    throw new GpunetError(
      'timeout_not_larger',
      `the new timeout (${timeout} s) must be larger than the current one (${view.job.timeout} s)`,
      {
        exitCode: ExitCode.USAGE,
        hint: '--timeout is the new total duration in seconds, not an addition',
        fields: {job: view.address.toBase58(), timeout: Number(timeout), currentTimeout: Number(view.job.timeout)},
      },
    )
  }
  const cost = view.job.price * (timeout - view.job.timeout)
  const balances = await rpcCall(net.connection, () => readBalances(net.connection, wallet.publicKey, net.mint))
  checkFunds(balances, {tokens: cost, lamports: SIGNATURE_FEE})
  const market = await readMarket(net.connection, net.programId, view.job.market)
  const payer = wallet.keypair()
  const ix = jobsInstruction(
    net.programId,
    'extend',
    {
      job: view.address,
      market: view.job.market,
      user: balances.tokenAccount,
      vault: market.vault,
      ...net.rewards(),
      authority: payer.publicKey,
      payer: payer.publicKey,
      tokenProgram: TOKEN_PROGRAM_ID,
    },
    {timeout},
  )
  const transaction = await prepareTransaction(net.connection, [ix], [payer], net.fees)
  checkFunds(balances, {tokens: cost, lamports: transaction.fee.lamports})
  return {previousTimeout: view.job.timeout, timeout, cost, balances, fee: transaction.fee, transaction}
}

/** Raises a job's timeout as quoted, paying the difference (at the job's price) into the market's vault. */
export async function extendJob(net: MarketNetwork, quote: ExtendQuote): Promise<{signature: string; fee: FeeQuote}> {
  return {signature: await sendPrepared(net.connection, quote.transaction), fee: quote.fee}
}

/** An extension sent: what `job extend --json` prints (after the network) and the library's `extendJob` returns. */
export interface ExtendReport {
  job: string
  previousTimeout: number
  timeout: number
  /** Price per second x (new timeout - previous timeout). */
  charged: AmountJson
  signature: string
  /** The transaction fee in SOL, priority fee included. */
  fee: FeeJson
}

/** The report of an extension once sent; `job` is the address as the caller gave it, which the report repeats. */
export function extendReport(job: string, quote: ExtendQuote, sent: {signature: string; fee: FeeQuote}): ExtendReport {
  return {
    job,
    previousTimeout: Number(quote.previousTimeout),
    timeout: Number(quote.timeout),
    charged: amountJson(quote.cost, TOKEN_DECIMALS, 'token'),
    signature: sent.signature,
    fee: feeJson(sent.fee),
  }
}
