import {strict as assert} from 'node:assert'

import {Draining} from '../../../src/lib/deployments/draining.js'

describe('draining a replica', () => {
  it('marks the job at once, and waits until no request is in flight to it', async () => {
    const draining = new Draining()
    let inFlight = 2
    draining.countInFlightWith((job) => (job === 'A' ? inFlight : 0))
    const started = Date.now()
    const done = draining.drain('A')
    assert.equal(draining.isDraining('A'), true, 'marked before the wait')
    assert.equal(draining.isDraining('B'), false)
    setTimeout(() => (inFlight = 1), 50)
    setTimeout(() => (inFlight = 0), 150)
    const {waitedMs, inFlight: left} = await done
    assert.equal(left, 0)
    assert.ok(waitedMs >= 140 && Date.now() - started >= 140, `waited ${waitedMs} ms`)
  })

  it('gives up after its cap when a request never ends, saying how many are left', async () => {
    const draining = new Draining()
    draining.countInFlightWith(() => 1)
    const {waitedMs, inFlight} = await draining.drain('A', 100)
    assert.equal(inFlight, 1)
    assert.ok(waitedMs >= 100 && waitedMs < 1000, `waited ${waitedMs} ms`)
  })

  it('forgets a job whose row is closed: its flag goes, the others stay', async () => {
    const draining = new Draining()
    await draining.drain('A')
    await draining.drain('B')
    draining.forget('A')
    assert.deepEqual([draining.isDraining('A'), draining.isDraining('B')], [false, true])
  })

  it('returns at once where nothing counts requests (no stable URL in front)', async () => {
    const {waitedMs, inFlight} = await new Draining().drain('A')
    assert.deepEqual([inFlight, waitedMs < 50], [0, true])
  })
})
