/**
 * The failover's decisions without a chain (docs/jobs.md, "Failover"): the queue timeout a post may ask for, the
 * market a waiting job moves to next, and every step the journal's state machine takes from each stage and each
 * thing the chain may say, with the one invariant that matters: a row ends with exactly one listing of the job alive.
 */
import {strict as assert} from 'node:assert'

import {isGpunetError} from '../../../../src/lib/errors.js'
import type {MoveStage} from '../../../../src/lib/job/failover/journal.js'
import {checkQueueTimeout, type MoveFacts, nextMarket, nextStep} from '../../../../src/lib/job/failover/steps.js'
import type {PlacementMarket, PlacementNeed} from '../../../../src/lib/market/jobs/placement.js'

const NO_NEED: PlacementNeed = {gpuModels: [], minVram: null, maxPrice: null, marketType: null, images: []}

function market(name: string, figures: Partial<PlacementMarket> = {}): PlacementMarket {
  return {
    market: name,
    slug: name,
    type: 'PREMIUM',
    gpuModels: ['A100'],
    lowestVram: 80,
    tokenPerHour: 1,
    usdPerHour: null,
    networkFeePercent: 0,
    freeNodes: 1,
    requiredImages: [],
    ...figures,
  }
}

function refusal(seconds: number, context: Partial<Parameters<typeof checkQueueTimeout>[1]> = {}): string | null {
  try {
    checkQueueTimeout(seconds, {marketJobTimeout: 7200, credits: false, network: 'localnet', scale: 1, ...context})
    return null
  } catch (error) {
    assert.ok(isGpunetError(error))
    assert.equal(error.exitCode, 2, 'a usage error')
    assert.ok(error.hint, 'with a hint')
    return error.code
  }
}

describe('failover: the queue timeout a post may ask for', () => {
  it('takes a minute up to the market job timeout, and refuses less or more with exit 2', () => {
    assert.equal(refusal(60), null)
    assert.equal(refusal(7200), null)
    assert.equal(refusal(59), 'invalid_queue_timeout')
    assert.equal(refusal(1), 'invalid_queue_timeout')
    assert.equal(refusal(7201), 'invalid_queue_timeout')
    assert.equal(refusal(600, {marketJobTimeout: 300}), 'invalid_queue_timeout')
  })

  it('refuses it with credits, and a time scale off the localnet', () => {
    assert.equal(refusal(600, {credits: true}), 'queue_timeout_credits')
    assert.equal(refusal(600, {scale: 30, network: 'devnet'}), 'queue_timeout_scale_localnet_only')
    assert.equal(refusal(600, {scale: 30, network: 'localnet'}), null)
    assert.equal(refusal(600, {scale: 1, network: 'mainnet'}), null)
  })
})

describe('failover: the market a waiting job moves to', () => {
  it('is the first that fits by the order of placement, the markets tried left out, until none is left', () => {
    const markets = [
      market('full', {freeNodes: 0, tokenPerHour: 0.5}),
      market('cheap-free', {tokenPerHour: 2}),
      market('dear-free', {tokenPerHour: 3}),
      market('small', {lowestVram: 12, tokenPerHour: 0.1}),
    ]
    const need = {...NO_NEED, minVram: 40}
    const order: string[] = ['full']
    for (;;) {
      const next = nextMarket(markets, need, 'token', order)
      if (next === null) break
      order.push(next.market)
    }
    // A free node first, then the price; the market too small is never chosen.
    assert.deepEqual(order, ['full', 'cheap-free', 'dear-free'])
  })

  it('moves anywhere without a need (an explicit market with --queue-timeout alone)', () => {
    const next = nextMarket([market('a', {freeNodes: 0}), market('b', {lowestVram: 1})], NO_NEED, 'token', ['a'])
    assert.equal(next?.market, 'b')
    assert.equal(nextMarket([market('a')], NO_NEED, 'token', ['a']), null)
  })
})

const FACTS: MoveFacts = {old: 'queued', delistLanded: false, delistExpired: false, newListed: false, listExpired: true}

/** Every combination of facts (the chain may say any of them after a kill). */
function everyFacts(): MoveFacts[] {
  const all: MoveFacts[] = []
  for (const old of ['queued', 'taken', 'closed'] as const)
    for (const delistLanded of [false, true])
      for (const delistExpired of [false, true])
        for (const newListed of [false, true])
          for (const listExpired of [false, true]) all.push({old, delistLanded, delistExpired, newListed, listExpired})
  return all
}

const SAVED = {raw: 'AA==', signature: 'sig', lastValidBlockHeight: 10}

describe('failover: the journal state machine', () => {
  it('delist saved: resends while it may land; a node that took the job ends the move; a closed job was delisted', () => {
    const row = {stage: 'delist-saved' as MoveStage, toMarket: 'B', list: null}
    assert.deepEqual(nextStep(row, FACTS), {do: 'resend-delist'})
    assert.deepEqual(nextStep(row, {...FACTS, delistExpired: true}), {do: 'record', stage: 'kept'})
    assert.deepEqual(nextStep(row, {...FACTS, old: 'taken'}), {do: 'record', stage: 'taken'})
    assert.deepEqual(nextStep(row, {...FACTS, old: 'closed', delistLanded: true}), {do: 'record', stage: 'delisted'})
    // Closed, but not by this delist (stopped by hand, or a chain reset): nothing of this move is alive to list.
    assert.deepEqual(nextStep(row, {...FACTS, old: 'closed'}), {do: 'record', stage: 'ended'})
  })

  it('delisted: lists on the move’s market, or ends when none was left', () => {
    assert.deepEqual(nextStep({stage: 'delisted', toMarket: 'B', list: null}, FACTS), {do: 'list'})
    assert.deepEqual(nextStep({stage: 'delisted', toMarket: null, list: null}, FACTS), {do: 'record', stage: 'ended'})
  })

  it('list saved: a listing that landed is the move done; unlanded bytes are resent, or made again once expired', () => {
    const row = {stage: 'list-saved' as MoveStage, toMarket: 'B', list: SAVED}
    assert.deepEqual(nextStep(row, {...FACTS, old: 'closed', newListed: true}), {do: 'record', stage: 'moved'})
    assert.deepEqual(nextStep(row, {...FACTS, old: 'closed', listExpired: false}), {do: 'resend-list'})
    assert.deepEqual(nextStep(row, {...FACTS, old: 'closed', listExpired: true}), {do: 'list'})
  })

  it('a final stage asks nothing', () => {
    for (const stage of ['moved', 'taken', 'kept', 'ended'] as const)
      for (const facts of everyFacts())
        assert.deepEqual(nextStep({stage, toMarket: 'B', list: SAVED}, facts), {do: 'nothing'})
  })

  it('never lists while the old job may still be alive, and never leaves a delisted job unlisted with a market to go to', () => {
    for (const stage of ['delist-saved', 'delisted', 'list-saved'] as const)
      for (const facts of everyFacts()) {
        const step = nextStep({stage, toMarket: 'B', list: stage === 'list-saved' ? SAVED : null}, facts)
        // A new listing is made only once the delist is recorded (delisted or list-saved come after it landed).
        if (step.do === 'list' || step.do === 'resend-list') assert.notEqual(stage, 'delist-saved')
        // From delisted on, the only way out is a listing that landed.
        if (stage !== 'delist-saved' && step.do === 'record') assert.equal(step.stage, 'moved')
      }
  })
})
