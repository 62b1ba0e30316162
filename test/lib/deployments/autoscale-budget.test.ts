/**
 * The budget (paying/budget.ts): what a deployment's jobs spent, and a property over random policies and loads:
 * driving the decision and paying only through the budget's check, the spend never passes the budget, the market's
 * price changing as it goes (each job pays at the price it was listed at).
 */
import {strict as assert} from 'node:assert'

import fc from 'fast-check'

import {
  affordableReplicas,
  feesSpent,
  jobPrice,
  jobSpend,
  type SpentJob,
  tokensSpent,
  withinBudget,
} from '../../../src/lib/deployments/paying/budget.js'
import {decide} from '../../../src/lib/deployments/autoscale/decide.js'
import type {AutoscalePolicy} from '../../../src/lib/deployments/autoscale/policy.js'

const job = (change: Partial<SpentJob>): SpentJob => ({
  state: 'RUNNING',
  time_start: 1000,
  time_end: 0,
  chain_timeout: 600,
  ...change,
})

describe('autoscaling budget (pure)', () => {
  it('a job not over counts its whole deposit; one delisted before it ran, nothing', () => {
    assert.equal(jobSpend(job({}), 3n), 1800n)
    assert.equal(jobSpend(job({state: 'QUEUED', time_start: 0}), 3n), 1800n)
    assert.equal(jobSpend(job({state: 'STOPPED', time_start: 0}), 3n), 0n)
  })
  it('a job over counts what its node was paid, at most its timeout; an unknown end counts whole', () => {
    assert.equal(jobSpend(job({state: 'STOPPED', time_end: 1100}), 3n), 300n)
    assert.equal(jobSpend(job({state: 'COMPLETED', time_end: 5000}), 3n), 1800n)
    assert.equal(jobSpend(job({state: 'COMPLETED', time_end: 0}), 3n), 1800n)
  })
  it('sums the jobs and a deposit in flight; fees are three signatures a listing, one an extension or stop', () => {
    assert.equal(tokensSpent([job({}), job({state: 'STOPPED', time_start: 0})], 2n, 7n), 1207n)
    const tasks = [
      {task: 'LIST', status: 'DONE', tx: 'a'},
      {task: 'EXTEND', status: 'DONE', tx: 'b'},
      {task: 'STOP', status: 'DONE', tx: null},
      {task: 'STOP', status: 'DONE', tx: 'c'},
    ] as const
    assert.equal(feesSpent(tasks, 1), 5000n * 5n)
  })
  it('a payment fits while spend + cost stays within the budget; without a budget, always', () => {
    assert.equal(withinBudget(100, 60n, 40n), true)
    assert.equal(withinBudget(100, 60n, 41n), false)
    assert.equal(withinBudget(null, 10n ** 18n, 1n), true)
  })
  it('the replicas the budget keeps: those alive plus the deposits left', () => {
    assert.equal(affordableReplicas(1000, 400n, 200n, 2), 5)
    assert.equal(affordableReplicas(1000, 1200n, 200n, 2), 2)
    assert.equal(affordableReplicas(null, 0n, 200n, 2), undefined)
    assert.equal(affordableReplicas(1000, 0n, 0n, 0), undefined)
  })

  it('a job counts at its own recorded price; a row without one at the market price given', () => {
    assert.equal(jobSpend(job({chain_price: '5'}), 3n), 3000n)
    assert.equal(jobSpend(job({state: 'STOPPED', time_end: 1100, chain_price: '5'}), 3n), 500n)
    assert.equal(jobSpend(job({chain_price: null}), 3n), 1800n)
    assert.equal(jobPrice({chain_price: '18446744073709551615'}, 1n), 18446744073709551615n)
    assert.equal(tokensSpent([job({chain_price: '1'}), job({chain_price: '4'})], 9n), 3000n)
  })

  it('property: over random policies, loads and price changes, paying through the check, the spend never passes the budget', () => {
    const step = fc.record({
      inFlight: fc.nat(40),
      held: fc.nat(5),
      advance: fc.integer({min: 1, max: 400}),
      // Jobs that end on their own this step (their index among the running), and extensions asked.
      ends: fc.array(fc.nat(10), {maxLength: 3}),
      extend: fc.array(fc.nat(10), {maxLength: 3}),
      // The market's new price this step (its authority's `update`), when it changes.
      reprice: fc.option(fc.integer({min: 1, max: 1000}), {freq: 4}),
    })
    const scenario = fc.record({
      min: fc.nat(3),
      span: fc.nat(6),
      target: fc.integer({min: 1, max: 8}),
      window: fc.integer({min: 10, max: 600}),
      price: fc.integer({min: 1, max: 1000}),
      timeout: fc.integer({min: 60, max: 3600}),
      deposits: fc.double({min: 1, max: 30, noNaN: true}),
      steps: fc.array(step, {minLength: 1, maxLength: 60}),
    })
    /** A job as the program runs it: its price fixed at listing, whatever the market does after. */
    type Run = SpentJob & {price: bigint}
    /** What the vault really paid for a job (the program's rule, independent of budget.ts). */
    const paid = (j: Run) => {
      if (j.state === 'RUNNING') return j.price * BigInt(j.chain_timeout)
      if (j.state === 'STOPPED' && j.time_start === 0) return 0n
      return j.price * BigInt(Math.min(j.time_end! - j.time_start, j.chain_timeout))
    }
    fc.assert(
      fc.property(scenario, (s) => {
        const policy: AutoscalePolicy = {
          min_replicas: s.min,
          max_replicas: Math.max(1, s.min + s.span),
          target_concurrency: s.target,
          scale_down_after: s.window,
        }
        let market = BigInt(s.price)
        const budget = Math.floor(Number(market * BigInt(s.timeout)) * s.deposits)
        const jobs: Run[] = []
        let replicas = policy.min_replicas
        let calmSince: number | null = null
        let now = 1_000_000
        // As the manager counts it: each job at the price recorded in its row, the market's now for a listing.
        const spent = () => tokensSpent(jobs, market)
        const alive = () => jobs.filter((j) => j.state === 'RUNNING')
        for (const t of s.steps) {
          now += t.advance
          const seconds = Math.floor(now / 1000)
          if (t.reprice !== null) market = BigInt(t.reprice)
          const deposit = market * BigInt(s.timeout)
          // Jobs past their timeout end; some end early on their own (their node is paid its time, the rest back).
          for (const j of alive())
            if (seconds >= j.time_start + j.chain_timeout)
              Object.assign(j, {state: 'COMPLETED', time_end: j.time_start + j.chain_timeout})
          for (const i of t.ends) {
            const j = alive()[i]
            if (j) Object.assign(j, {state: 'COMPLETED', time_end: seconds})
          }
          const d = decide({
            policy,
            replicas,
            inFlight: t.inFlight,
            held: t.held,
            now,
            calmSince,
            windowMs: s.window * 1000,
            affordable: affordableReplicas(budget, spent(), deposit, alive().length),
          })
          replicas = d.replicas
          calmSince = d.calmSince
          // The strategy: stop the excess, list the shortfall, extend what is asked: every payment checked.
          for (const j of alive().slice(replicas)) Object.assign(j, {state: 'STOPPED', time_end: seconds})
          for (let n = alive().length; n < replicas; n++) {
            if (!withinBudget(budget, spent(), deposit)) break
            const price = market
            jobs.push({
              state: 'RUNNING',
              time_start: seconds,
              time_end: 0,
              chain_timeout: s.timeout,
              chain_price: String(price),
              price,
            })
          }
          for (const i of t.extend) {
            const j = alive()[i]
            // An extension pays at the job's own price (the program's `extend`), not the market's.
            if (j && withinBudget(budget, spent(), j.price * BigInt(s.timeout))) j.chain_timeout += s.timeout
          }
          const truth = jobs.reduce((sum, j) => sum + paid(j), 0n)
          if (truth > BigInt(budget)) return false
        }
        return true
      }),
      {numRuns: 300},
    )
  })
})
