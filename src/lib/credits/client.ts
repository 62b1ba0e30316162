/**
 * Credits through the network's public API (the manager's origin; the localnet's serves them too), with the
 * paths and bodies of @nosana/api 2.1.8. The routes are the manager's, so they are asked through its client, an
 * ApiClient (bounded answers read with zod, 429 waited out, keys redacted, the manager's errors). Every POST
 * carries an Idempotency-Key, made once per logical request and sent unchanged on each try, so a retry never
 * lists, extends or stops twice.
 */
import {randomUUID} from 'node:crypto'

import {z} from 'zod'

import {type ApiClient, segment} from '../http/api-client.js'
import {type AmountJson, amountJson} from '../text/amounts.js'

const address = z.string().min(32).max(44)
const signature = z.string().min(1).max(100)
const usd = z.number().finite().nonnegative()

const balanceAnswer = z.looseObject({assignedCredits: usd, reservedCredits: usd, settledCredits: usd})
export type CreditBalanceAnswer = z.infer<typeof balanceAnswer>

const listAnswer = z.looseObject({
  tx: signature,
  job: address,
  run: address.optional(),
  credits: z.looseObject({
    costUSD: usd,
    creditsUsed: usd,
    reservationId: z.string().max(200),
    project: address.optional(),
  }),
})
export type CreditListAnswer = z.infer<typeof listAnswer>

const extendAnswer = z.looseObject({
  tx: signature,
  job: address,
  credits: z.looseObject({costUSD: usd, creditsUsed: usd, reservationId: z.string().max(200)}),
})
export type CreditExtendAnswer = z.infer<typeof extendAnswer>

const stopAnswer = z.looseObject({tx: signature, job: address, delisted: z.boolean()})
export type CreditStopAnswer = z.infer<typeof stopAnswer>

/** A fresh Idempotency-Key: one per logical request, reused on its retries. */
export function newIdempotencyKey(): string {
  return randomUUID()
}

/** The owner's credits: given, held for running jobs, spent. */
export function creditBalance(client: ApiClient): Promise<CreditBalanceAnswer> {
  return client.request('GET', '/api/credits/balance', undefined, balanceAnswer)
}

/** Lists a job paid by credits: the definition already uploaded as `ipfsHash`; `timeout` in seconds. */
export function listWithCredits(
  client: ApiClient,
  body: {ipfsHash: string; market: string; timeout?: number},
  idempotencyKey: string,
): Promise<CreditListAnswer> {
  return client.request('POST', '/api/jobs/list', body, listAnswer, {idempotencyKey})
}

/** Extends a credit-paid job by `seconds`. */
export function extendWithCredits(
  client: ApiClient,
  job: string,
  seconds: number,
  idempotencyKey: string,
): Promise<CreditExtendAnswer> {
  return client.request('POST', `/api/jobs/${segment(job)}/extend`, {seconds}, extendAnswer, {
    idempotencyKey,
  })
}

/** Stops a credit-paid job: delisted when queued, ended when running. */
export function stopWithCredits(client: ApiClient, job: string, idempotencyKey: string): Promise<CreditStopAnswer> {
  return client.request('POST', `/api/jobs/${segment(job)}/stop`, undefined, stopAnswer, {idempotencyKey})
}

/** Credit base units per credit (6 decimals, as the payment token). */
const CREDIT_DECIMALS = 6

/** An amount of credits as the API sends it (a number of USD credits), in the `--json` shape of every amount. */
export function creditAmount(credits: number): AmountJson {
  return amountJson(BigInt(Math.round(credits * 10 ** CREDIT_DECIMALS)), CREDIT_DECIMALS, 'credit')
}

/** The owner's credits as `credits balance --json` prints them: available is what is neither held nor spent. */
export interface CreditsJson {
  assigned: AmountJson
  reserved: AmountJson
  settled: AmountJson
  available: AmountJson
}

/** The balance's four amounts. */
export function creditsJson(answer: CreditBalanceAnswer): CreditsJson {
  const available = Math.max(0, answer.assignedCredits - answer.reservedCredits - answer.settledCredits)
  return {
    assigned: creditAmount(answer.assignedCredits),
    reserved: creditAmount(answer.reservedCredits),
    settled: creditAmount(answer.settledCredits),
    available: creditAmount(available),
  }
}
