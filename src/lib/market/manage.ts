/** Stopping a job (delist a queued one, end a running one) and extending its timeout, as its project. */
import {getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import type {PublicKey} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../errors.js'
import type {Wallet} from '../wallet.js'
import {type Balances, checkFunds, readBalances, SIGNATURE_FEE} from './balances.js'
import type {MarketNetwork} from './connect.js'
import {jobsInstruction} from './instructions.js'
import {isFinal, type JobView, readJob, readMarket} from './jobs.js'
import {sendJobsTransaction} from './send.js'

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
      fields: {job: address.toBase58(), status: view.status},
    })
  }
  return view
}

/** Stops a job: `delist` when queued (the whole deposit comes back), `end` when running (the node is paid its time). */
export async function stopJob(
  net: MarketNetwork,
  wallet: Wallet,
  view: JobView,
): Promise<{signature: string; action: 'delist' | 'end'}> {
  const market = await readMarket(net.connection, view.job.market)
  const deposit = getAssociatedTokenAddressSync(net.mint, view.job.payer, true)
  const authority = wallet.keypair()
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
  const signature = await sendJobsTransaction(net.connection, [ix], [authority])
  return {signature, action: view.run ? 'end' : 'delist'}
}

/** What an extension costs: price x (new timeout - current one); exits 4 when the wallet cannot pay it. */
export async function quoteExtend(
  net: MarketNetwork,
  wallet: Wallet,
  view: JobView,
  timeout: bigint,
): Promise<{cost: bigint; balances: Balances}> {
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
  const balances = await readBalances(net.connection, wallet.publicKey, net.mint)
  checkFunds(balances, {tokens: cost, lamports: SIGNATURE_FEE})
  return {cost, balances}
}

/** Raises a job's timeout to `timeout` seconds, paying the difference into the market's vault. */
export async function extendJob(net: MarketNetwork, wallet: Wallet, view: JobView, timeout: bigint): Promise<string> {
  const market = await readMarket(net.connection, view.job.market)
  const payer = wallet.keypair()
  const ix = jobsInstruction(
    net.programId,
    'extend',
    {
      job: view.address,
      market: view.job.market,
      user: getAssociatedTokenAddressSync(net.mint, payer.publicKey, true),
      vault: market.vault,
      ...net.rewards(),
      authority: payer.publicKey,
      payer: payer.publicKey,
      tokenProgram: TOKEN_PROGRAM_ID,
    },
    {timeout},
  )
  return sendJobsTransaction(net.connection, [ix], [payer])
}
