/** Reading jobs, their runs and markets from the chain, and the status a job shows: QUEUED, RUNNING, COMPLETED, STOPPED. */
import type {AccountInfo, Connection, PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'

import {jobStatus, type JobStatus} from '../codec/account-layout.js'
import {decodeChecked} from '../codec/account-check.js'
import {
  decodeJobAccount,
  decodeMarketAccount,
  decodeRunAccount,
  type JobAccount,
  JobState,
  type MarketAccount,
  RUN_ACCOUNT_DISCRIMINATOR,
  type RunAccount,
} from '../codec/accounts.js'
import {rpcCall} from '../rpc/rpc.js'

export {isFinal, jobStatus, type JobStatus} from '../codec/account-layout.js'

/** A job as read from the chain, with its run while a node works on it. */
export interface JobView {
  address: PublicKey
  job: JobAccount
  run: (RunAccount & {address: PublicKey}) | null
  status: JobStatus
}

/** Reads a market, or exits 7 when the address holds none. */
export async function readMarket(
  connection: Connection,
  programId: PublicKey,
  address: PublicKey,
): Promise<MarketAccount> {
  return decodeAt(connection, programId, address, 'market', decodeMarketAccount)
}

/**
 * Reads a job and its run, or exits 7 when the address holds no job. `likelyRun`, the run account the poster's
 * `list` named (created when a node was waiting), is read in the same request: when it is this job's run, the
 * program's accounts need not be searched for it.
 */
export async function readJob(
  connection: Connection,
  programId: PublicKey,
  address: PublicKey,
  likelyRun?: PublicKey,
): Promise<JobView> {
  const [info, runInfo] = await rpcCall(connection, () =>
    connection.getMultipleAccountsInfo(likelyRun ? [address, likelyRun] : [address]),
  )
  const job = decodeInfo(info ?? null, programId, address, 'job', decodeJobAccount)
  if (job.state !== JobState.QUEUED) return {address, job, run: null, status: jobStatus(job, null)}
  const known = likelyRun && runInfo ? runOf(runInfo, programId, address) : null
  const run = known ? {...known, address: likelyRun!} : await findRun(connection, programId, address)
  if (!run) {
    // A node that finishes between the two reads closes the run: read the job again before calling it QUEUED,
    // or a job that just ended would show QUEUED again.
    const now = await decodeAt(connection, programId, address, 'job', decodeJobAccount)
    if (now.state !== JobState.QUEUED) return {address, job: now, run: null, status: jobStatus(now, null)}
  }
  return {address, job, run, status: jobStatus(job, run)}
}

/** The run an account holds when it is one of `job`'s, else null. */
function runOf(info: AccountInfo<Buffer>, programId: PublicKey, job: PublicKey): RunAccount | null {
  if (!info.owner.equals(programId)) return null
  try {
    const run = decodeRunAccount(info.data)
    return run.job.equals(job) ? run : null
  } catch {
    // Not a run (another account, or one cut short): none of this job's.
    return null
  }
}

/**
 * The getProgramAccounts filters of a job's runs: the RunAccount discriminator at 0 and the job right after it
 * (reference/README.md). Never the size: runs are allocated 120 bytes on chain, more than their 113 of content.
 */
export function runFilters(job: PublicKey) {
  return [
    {memcmp: {offset: 0, bytes: bs58.encode(RUN_ACCOUNT_DISCRIMINATOR)}},
    {memcmp: {offset: 8, bytes: job.toBase58()}},
  ]
}

/** The RunAccount of a job (the oldest, when a stopped job was claimed several times), or null. */
export async function findRun(
  connection: Connection,
  programId: PublicKey,
  job: PublicKey,
): Promise<(RunAccount & {address: PublicKey}) | null> {
  return (await findRuns(connection, programId, job))[0] ?? null
}

/** Every RunAccount of a job, oldest first. */
export async function findRuns(
  connection: Connection,
  programId: PublicKey,
  job: PublicKey,
): Promise<Array<RunAccount & {address: PublicKey}>> {
  const accounts = await rpcCall(connection, () => connection.getProgramAccounts(programId, {filters: runFilters(job)}))
  // What the RPC node answers is checked again: an account cut short, or another job's run, is none of these.
  const runs = accounts.flatMap(({pubkey, account}) => {
    const run = runOf(account, programId, job)
    return run ? [{...run, address: pubkey}] : []
  })
  return runs.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0))
}

async function decodeAt<T>(
  connection: Connection,
  programId: PublicKey,
  address: PublicKey,
  what: string,
  decode: (data: Uint8Array) => T,
): Promise<T> {
  const info = await rpcCall(connection, () => connection.getAccountInfo(address))
  return decodeInfo(info, programId, address, what, decode)
}

/** Decodes an account read from the chain by the one rule of account-check.ts. */
function decodeInfo<T>(
  info: AccountInfo<Buffer> | null,
  programId: PublicKey,
  address: PublicKey,
  what: string,
  decode: (data: Uint8Array) => T,
): T {
  const raw = info && {owner: info.owner.toBase58(), data: info.data}
  return decodeChecked(raw, programId.toBase58(), address.toBase58(), what, decode)
}
