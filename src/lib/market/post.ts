/** Posting a job: pricing it on its market, checking the wallet covers it, uploading the definition and `list`. */
import {TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {Keypair, type PublicKey, SystemProgram} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../errors.js'
import type {Wallet} from '../wallet.js'
import {JOB_ACCOUNT_SIZE, type MarketAccount, RUN_ACCOUNT_SIZE} from './accounts.js'
import {type Balances, checkFunds, readBalances, SIGNATURE_FEE} from './balances.js'
import type {MarketNetwork} from './connect.js'
import {jobsInstruction} from './instructions.js'
import {ipfsHashToBytes} from './ipfs-hash.js'
import {readMarket} from './jobs.js'
import {sendJobsTransaction} from './send.js'

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
  /** Lamports of the transaction's signatures. */
  fees: bigint
  /** Lamports of the rent of the job account and of the run account `list` creates when a node is waiting. */
  rent: bigint
  balances: Balances
}

/** Prices a job on its market and checks the wallet can pay: exits 4 before anything is uploaded or sent. */
export async function quotePost(
  net: MarketNetwork,
  wallet: Wallet,
  market: PublicKey,
  timeout?: bigint,
): Promise<PostQuote> {
  const marketAccount = await readMarket(net.connection, market)
  const duration = timeout ?? marketAccount.jobTimeout
  if (duration <= 0n) {
    throw new GpunetError('invalid_timeout', 'the timeout must be a positive number of seconds', {
      exitCode: ExitCode.USAGE,
    })
  }
  const total = marketAccount.jobPrice * duration
  const balances = await readBalances(net.connection, wallet.publicKey, net.mint)
  // The job account, and the run account `list` creates when a node is already waiting, plus three signatures.
  const [jobRent, runRent] = await Promise.all([
    net.connection.getMinimumBalanceForRentExemption(JOB_ACCOUNT_SIZE),
    net.connection.getMinimumBalanceForRentExemption(RUN_ACCOUNT_SIZE),
  ])
  const fees = 3n * SIGNATURE_FEE
  const rent = BigInt(jobRent + runRent)
  checkFunds(balances, {tokens: total, lamports: fees + rent})
  return {market, marketAccount, timeout: duration, pricePerSecond: marketAccount.jobPrice, total, fees, rent, balances}
}

/** Posts a job whose definition is already uploaded: `list` with a fresh job keypair, so a retry never posts twice. */
export async function listJob(
  net: MarketNetwork,
  wallet: Wallet,
  quote: PostQuote,
  cid: string,
): Promise<{job: PublicKey; signature: string}> {
  const job = Keypair.generate()
  const run = Keypair.generate()
  const payer = wallet.keypair()
  const ix = jobsInstruction(
    net.programId,
    'list',
    {
      job: job.publicKey,
      market: quote.market,
      run: run.publicKey,
      user: quote.balances.tokenAccount,
      vault: quote.marketAccount.vault,
      payer: payer.publicKey,
      ...net.rewards(),
      authority: payer.publicKey,
      tokenProgram: TOKEN_PROGRAM_ID,
      systemProgram: SystemProgram.programId,
    },
    {ipfsJob: ipfsHashToBytes(cid), timeout: quote.timeout},
  )
  const signature = await sendJobsTransaction(net.connection, [ix], [payer, job, run])
  return {job: job.publicKey, signature}
}
