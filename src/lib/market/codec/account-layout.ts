/**
 * What of the jobs program's accounts can be read without web3.js: their discriminators, the job states, the
 * status a job shows, and where the few fields a job's node is found by sit in the bytes. accounts.ts decodes whole
 * accounts with web3.js keys and takes its discriminators from here; job-placement.ts reads the fields below.
 */
import {accountDiscriminator} from './discriminator.js'

/** Job states as stored on chain; RUNNING is never stored (a queued job with a RunAccount is running). */
export const JobState = {QUEUED: 0, DONE: 2, STOPPED: 3} as const

export const JOB_ACCOUNT_DISCRIMINATOR = accountDiscriminator('JobAccount')
export const MARKET_ACCOUNT_DISCRIMINATOR = accountDiscriminator('MarketAccount')
export const RUN_ACCOUNT_DISCRIMINATOR = accountDiscriminator('RunAccount')

/**
 * Byte offsets in a JobAccount (discriminator, ipfsJob, ipfsResult, market, node, payer, price, project, state...)
 * and a RunAccount (discriminator, job, node, payer, state, time), in IDL order; a test holds them to accounts.ts's
 * codec.
 */
export const JOB_FIELD_OFFSETS = {project: 8 + 32 * 5 + 8, state: 8 + 32 * 5 + 8 + 32} as const
export const RUN_FIELD_OFFSETS = {job: 8, node: 8 + 32, time: 8 + 32 * 3 + 1} as const

/** Thrown when bytes are not an account of the expected type. */
export class AccountDecodeError extends Error {
  override name = 'AccountDecodeError'
}

export type JobStatus = 'QUEUED' | 'RUNNING' | 'COMPLETED' | 'STOPPED'

/** The status of a job: RUNNING is never stored, it is a queued job with a RunAccount. */
export function jobStatus(job: {state: number}, run: object | null): JobStatus {
  if (job.state === JobState.DONE) return 'COMPLETED'
  if (job.state === JobState.STOPPED) return 'STOPPED'
  return run ? 'RUNNING' : 'QUEUED'
}

/** True once a job can no longer change. */
export function isFinal(status: JobStatus): boolean {
  return status === 'COMPLETED' || status === 'STOPPED'
}
