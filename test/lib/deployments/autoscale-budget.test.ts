/**
 * The budget (paying/budget.ts): what a deployment's jobs spent, and a property over random policies and loads:
 * driving the decision and paying only through the budget's check, the spend never passes the budget.
 */
import {strict as assert} from 'node:assert'

import fc from 'fast-check'

import {
  affordableReplicas,
  feesSpent,
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

  it('property: over random policies and loads, paying through the check, the spend never passes the budget', () => {
    const step = fc.record({
      inFlight: fc.nat(40),
      held: fc.nat(5),
      advance: fc.integer({min: 1, max: 400}),
      // Jobs that end on their own this step (their index among the running), and extensions asked.
      ends: fc.array(fc.nat(10), {maxLength: 3}),
      extend: fc.array(fc.nat(10), {maxLength: 3}),
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
    fc.assert(
      fc.property(scenario, (s) => {
        const policy: AutoscalePolicy = {
          min_replicas: s.min,
          max_replicas: Math.max(1, s.min + s.span),
          target_concurrency: s.target,
          scale_down_after: s.window,
        }
        const price = BigInt(s.price)
        const deposit = price * BigInt(s.timeout)
        const budget = Math.floor(Number(deposit) * s.deposits)
        const jobs: SpentJob[] = []
        let replicas = policy.min_replicas
        let calmSince: number | null = null
        let now = 1_000_000
        const spent = () => tokensSpent(jobs, price)
        const alive = () => jobs.filter((j) => j.state === 'RUNNING')
        for (const t of s.steps) {
          now += t.advance
          const seconds = Math.floor(now / 1000)
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
            jobs.push({state: 'RUNNING', time_start: seconds, time_end: 0, chain_timeout: s.timeout})
          }
          for (const i of t.extend) {
            const j = alive()[i]
            if (j && withinBudget(budget, spent(), deposit)) j.chain_timeout += s.timeout
          }
          if (spent() > BigInt(budget)) return false
        }
        return true
      }),
      {numRuns: 300},
    )
  })
})
