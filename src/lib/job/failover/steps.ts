/**
 * The failover's decisions, pure so that each can be tested without a chain (docs/jobs.md, "Failover"): the queue
 * timeout a post may ask for, the market a waiting job moves to next, and what a journal row asks to be done given
 * what the chain says now.
 */
import {ExitCode, GpunetError} from '../../errors.js'
import {
  MIN_QUEUE_TIMEOUT_S,
  type Payment,
  placeJob,
  type PlacementMarket,
  type PlacementNeed,
} from '../../market/jobs/placement.js'
import type {MoveRow, MoveStage} from './journal.js'

/**
 * Checks `--queue-timeout` against the market posted to (exit 2): at least a minute, at most the market's job
 * timeout; with credits it is refused (their jobs are listed by the network's API, whose stop and list gpunet does
 * not journal), and so is a time scale off the localnet.
 */
export function checkQueueTimeout(
  seconds: number,
  context: {marketJobTimeout: number; credits: boolean; network: string; scale: number},
): void {
  const usage = (code: string, message: string, hint: string) =>
    new GpunetError(code, message, {exitCode: ExitCode.USAGE, hint, fields: {queueTimeout: seconds}})
  if (context.credits) {
    throw usage(
      'queue_timeout_credits',
      '--queue-timeout is not taken with --credits',
      "a job paid by credits is listed by the network's API: post it with the wallet's tokens to fail over, or choose its market yourself",
    )
  }
  if (seconds < MIN_QUEUE_TIMEOUT_S) {
    throw usage(
      'invalid_queue_timeout',
      `--queue-timeout ${seconds} s is shorter than a minute`,
      'give at least 1m, e.g. --queue-timeout 5m',
    )
  }
  if (seconds > context.marketJobTimeout) {
    throw usage(
      'invalid_queue_timeout',
      `--queue-timeout ${seconds} s is longer than the market's job timeout (${context.marketJobTimeout} s)`,
      `give at most ${context.marketJobTimeout}s, or --timeout alone to let the job wait its whole timeout`,
    )
  }
  if (context.scale !== 1 && context.network !== 'localnet') {
    throw usage(
      'queue_timeout_scale_localnet_only',
      `queueTimeoutScale ${context.scale} is taken on the localnet only, not on ${context.network}`,
      'unset GPUNET_QUEUE_TIMEOUT_SCALE: on a real network a queue timeout lasts as long as asked',
    )
  }
}

/**
 * The market a job still queued moves to: the first that fits the need by the order of placement, leaving out those
 * already tried; null when none is left.
 */
export function nextMarket(
  markets: PlacementMarket[],
  need: PlacementNeed,
  payment: Payment,
  tried: readonly string[],
): PlacementMarket | null {
  const left = markets.filter((m) => !tried.includes(m.market))
  const chosen = placeJob(left, need, payment).chosen
  return left.find((m) => m.market === chosen) ?? null
}

/** What the chain says of a move's jobs now. */
export interface MoveFacts {
  /** The old job: still in its market's queue, taken by a node (or over), or its account closed. */
  old: 'queued' | 'taken' | 'closed'
  /** The saved delist landed (its signature is confirmed without error). */
  delistLanded: boolean
  /** The saved delist's blockhash has expired: its bytes can never land now. */
  delistExpired: boolean
  /** The new job's account exists: its listing landed. */
  newListed: boolean
  /** The saved listing's blockhash has expired. */
  listExpired: boolean
}

/** One step of a move: record where it is, send saved bytes again, or make a new listing of the job. */
export type MoveStep =
  {do: 'record'; stage: MoveStage} | {do: 'resend-delist'} | {do: 'resend-list'} | {do: 'list'} | {do: 'nothing'}

/**
 * What a journal row asks for, given the chain now. A move goes forward whenever it can (a delist that landed is
 * followed by the listing it announced), and back only where nothing was paid: a delist that never landed leaves the
 * old job listed (`kept`), a node that took the old job ends the move (`taken`). So each row ends with exactly one
 * listing of the job alive, the deposit of every other back in its payer's account.
 */
export function nextStep(row: Pick<MoveRow, 'stage' | 'toMarket' | 'list'>, facts: MoveFacts): MoveStep {
  switch (row.stage) {
    case 'delist-saved':
      if (facts.old === 'taken') return {do: 'record', stage: 'taken'}
      if (facts.old === 'closed') return {do: 'record', stage: facts.delistLanded ? 'delisted' : 'ended'}
      return facts.delistExpired ? {do: 'record', stage: 'kept'} : {do: 'resend-delist'}
    case 'delisted':
      return row.toMarket === null ? {do: 'record', stage: 'ended'} : {do: 'list'}
    case 'list-saved':
      if (facts.newListed) return {do: 'record', stage: 'moved'}
      // Bytes that can never land are made again, with new keys: the job is delisted and must be listed once.
      return row.list !== null && !facts.listExpired ? {do: 'resend-list'} : {do: 'list'}
    default:
      return {do: 'nothing'}
  }
}
