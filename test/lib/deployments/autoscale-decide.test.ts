/** The autoscaling decision (autoscale/decide.ts): up at once, down one at a time after the window, with hysteresis. */
import {strict as assert} from 'node:assert'

import {decide, type DecideInput} from '../../../src/lib/deployments/autoscale/decide.js'
import type {AutoscalePolicy} from '../../../src/lib/deployments/autoscale/policy.js'

const NOW = 1_800_000_000_000
const WINDOW = 300_000
const policy = (change: Partial<AutoscalePolicy> = {}): AutoscalePolicy => ({
  min_replicas: 0,
  max_replicas: 3,
  target_concurrency: 2,
  scale_down_after: 300,
  ...change,
})
const input = (change: Partial<DecideInput>): DecideInput => ({
  policy: policy(),
  replicas: 1,
  inFlight: 0,
  held: 0,
  now: NOW,
  calmSince: null,
  windowMs: WINDOW,
  ...change,
})

describe('autoscaling decision (pure)', () => {
  it('scales up at once to ceil((in flight + held) / target)', () => {
    const d = decide(input({replicas: 1, inFlight: 4, held: 1}))
    assert.deepEqual([d.kind, d.replicas, d.wanted], ['up', 3, 3])
    assert.match(d.reason, /1 -> 3 replicas: demand above target \(in flight 4, held 1, target 2/)
  })
  it('caps the scale-up at max replicas', () => {
    const d = decide(input({replicas: 1, inFlight: 40}))
    assert.deepEqual([d.kind, d.replicas, d.wanted], ['up', 3, 20])
  })
  it('from 0, one held request lists a replica', () => {
    assert.deepEqual(
      [decide(input({replicas: 0, held: 1})).replicas, decide(input({replicas: 0, held: 1})).kind],
      [1, 'up'],
    )
  })
  it('at 0 with nothing held and nothing in flight, stays at 0', () => {
    const d = decide(input({replicas: 0}))
    assert.deepEqual([d.kind, d.replicas, d.calmSince], ['hold', 0, null])
  })
  it('a load at target exactly does not scale up', () => {
    assert.equal(decide(input({replicas: 2, inFlight: 4})).kind, 'hold')
  })
  it('below min (a policy just set) scales up to min, above max down to max, at once', () => {
    assert.deepEqual(
      [decide(input({policy: policy({min_replicas: 2}), replicas: 0})).replicas, decide(input({replicas: 5})).replicas],
      [2, 3],
    )
  })
  it('a load that fits in one replica less starts the window, and nothing changes before it ends', () => {
    const start = decide(input({replicas: 2, inFlight: 1}))
    assert.deepEqual([start.kind, start.replicas, start.calmSince], ['hold', 2, NOW])
    const before = decide(input({replicas: 2, inFlight: 1, calmSince: NOW, now: NOW + WINDOW - 1}))
    assert.deepEqual([before.kind, before.calmSince], ['hold', NOW])
  })
  it('after the window, down one replica only, and the window starts again', () => {
    const d = decide(input({replicas: 3, inFlight: 0, calmSince: NOW - WINDOW}))
    assert.deepEqual([d.kind, d.replicas, d.calmSince], ['down', 2, NOW])
  })
  it('hysteresis: a load that would fit in one replica less but above 70% of target there keeps the replicas', () => {
    // 2 replicas, target 2: one replica at 70% takes 1.4; 2 in flight is over it, so no window starts.
    const d = decide(input({replicas: 2, inFlight: 2, calmSince: NOW - 10 * WINDOW}))
    assert.deepEqual([d.kind, d.replicas, d.calmSince], ['hold', 2, null])
    // 1 in flight fits within 1.4: down after the window.
    assert.equal(decide(input({replicas: 2, inFlight: 1, calmSince: NOW - WINDOW})).replicas, 1)
  })
  it('a busy tick in the window resets it', () => {
    const d = decide(input({replicas: 2, inFlight: 3, calmSince: NOW - WINDOW + 1}))
    assert.equal(d.calmSince, null)
  })
  it('never below min replicas', () => {
    const d = decide(input({policy: policy({min_replicas: 1}), replicas: 1, calmSince: NOW - 10 * WINDOW}))
    assert.deepEqual([d.kind, d.replicas], ['hold', 1])
  })
  it('to 0 after the window when idle with min 0', () => {
    assert.deepEqual(
      [
        decide(input({replicas: 1, calmSince: NOW - WINDOW})).kind,
        decide(input({replicas: 1, calmSince: NOW - WINDOW})).replicas,
      ],
      ['down', 0],
    )
  })
  it('a held request keeps one replica at least (never down to 0 while one waits)', () => {
    assert.equal(decide(input({replicas: 1, held: 1, calmSince: NOW - WINDOW})).replicas, 1)
  })
  it('the budget caps the scale-up, and a budget that pays for fewer than there are brings them down', () => {
    const capped = decide(input({replicas: 1, inFlight: 6, affordable: 2}))
    assert.deepEqual([capped.kind, capped.replicas], ['up', 2])
    assert.match(capped.reason, /the budget pays for 2/)
    assert.deepEqual([decide(input({replicas: 3, inFlight: 6, affordable: 1})).replicas], [1])
    // Even under min: the budget wins.
    assert.equal(decide(input({policy: policy({min_replicas: 2}), replicas: 0, affordable: 1})).replicas, 1)
  })
  it('a fractional target rounds the replicas up', () => {
    assert.equal(
      decide(input({policy: policy({target_concurrency: 0.5, max_replicas: 10}), replicas: 1, inFlight: 3})).replicas,
      6,
    )
  })
})
