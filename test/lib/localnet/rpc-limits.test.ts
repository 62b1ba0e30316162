/**
 * The localnet RPC's limits, unit-tested on its dispatcher with a chain stand-in that can be at any slot: a young
 * localnet (slot < 150) cannot show the 150-slot window of getRecentPrioritizationFees, and no end-to-end test
 * asked getMultipleAccounts for more keys than a node allows (issue 26's mutation audit).
 */
import {strict as assert} from 'node:assert'

import {Keypair} from '@solana/web3.js'

import type {Localnet} from '../../../src/lib/localnet/state.js'
import {RpcHandler} from '../../../src/lib/localnet/rpc/rpc.js'

/** A dispatcher over a chain that is at `slot` and holds no account. */
function handlerAt(slot: number): RpcHandler {
  const chain = {slot: () => slot, account: () => null}
  return new RpcHandler({chain} as unknown as Localnet)
}

const call = (handler: RpcHandler, method: string, params: unknown[]) =>
  handler.handle({jsonrpc: '2.0', id: 1, method, params}) as {result?: unknown; error?: {code: number; message: string}}

const keys = (n: number) => Array.from({length: n}, () => Keypair.generate().publicKey.toBase58())

describe('localnet RPC limits (dispatcher)', () => {
  it('answers getMultipleAccounts for up to 100 keys and refuses 101, as a node does', () => {
    const handler = handlerAt(10)
    const answered = call(handler, 'getMultipleAccounts', [keys(100)])
    assert.equal(answered.error, undefined)
    assert.deepEqual(
      (answered.result as {value: unknown[]}).value,
      Array.from({length: 100}, () => null),
    )
    assert.deepEqual(call(handler, 'getMultipleAccounts', [keys(101)]).error, {
      code: -32602,
      message: 'Too many inputs provided; max 100',
    })
  })

  it('answers getRecentPrioritizationFees for the last 150 slots, or every slot of a younger chain', () => {
    for (const [slot, first] of [
      [1000, 851],
      [149, 0],
      [5, 0],
    ] as const) {
      const fees = call(handlerAt(slot), 'getRecentPrioritizationFees', [[]]).result as {
        slot: number
        prioritizationFee: number
      }[]
      assert.deepEqual(
        fees.map((f) => f.slot),
        Array.from({length: slot - first + 1}, (_, i) => first + i),
        `at slot ${slot}`,
      )
      assert.ok(fees.every((f) => f.prioritizationFee === 0))
    }
  })
})
