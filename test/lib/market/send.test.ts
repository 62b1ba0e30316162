import {strict as assert} from 'node:assert'

import {Keypair, SystemProgram} from '@solana/web3.js'
import {base58btc} from 'multiformats/bases/base58'

import {isGpunetError} from '../../../src/lib/errors.js'
import {openConnection} from '../../../src/lib/market/rpc/rpc.js'
import {prepareTransaction, sendPrepared} from '../../../src/lib/market/rpc/send.js'
import {startStandinRpc, type StandinRpc} from '../../helpers/standin.js'

describe('sending a transaction', function () {
  this.timeout(30_000)
  let rpc: StandinRpc
  const payer = Keypair.generate()
  const transfer = SystemProgram.transfer({
    fromPubkey: payer.publicKey,
    toPubkey: Keypair.generate().publicKey,
    lamports: 1,
  })
  const policy = {priorityFee: false, maxPriorityFeeLamports: 1_000_000n}

  beforeEach(async () => {
    rpc = await startStandinRpc()
  })
  afterEach(() => rpc.close())

  const sends = () => rpc.requests.filter((r) => r.method === 'sendTransaction').map((r) => r.params[0] as string)

  it('resends the same signed bytes until they land, so a retry never posts twice', async () => {
    rpc.dropped = 2
    const connection = openConnection(rpc.url)
    const prepared = await prepareTransaction(connection, [transfer], [payer], policy)
    const signature = await sendPrepared(connection, prepared)
    const sent = sends()
    assert.ok(sent.length >= 3, `${sent.length} sends`)
    assert.equal(new Set(sent).size, 1)
    assert.equal(rpc.sent.length, 1)
    assert.equal(signature, base58btc.baseEncode(rpc.sent[0]!.signature!))
  })

  it('signs again only once the blockhash expired, and gives up with exit 5 after a few blockhashes', async () => {
    rpc.dropped = Number.POSITIVE_INFINITY
    rpc.heightStep = 1000
    const connection = openConnection(rpc.url)
    const prepared = await prepareTransaction(connection, [transfer], [payer], policy)
    await assert.rejects(sendPrepared(connection, prepared), (error) => {
      assert.ok(isGpunetError(error))
      assert.equal(error.code, 'transaction_expired')
      assert.equal(error.exitCode, 5)
      return true
    })
    assert.equal(new Set(sends()).size, 3, 'one signed transaction per blockhash')
    assert.equal(rpc.sent.length, 0)
  })

  it('sets the compute-unit limit from the simulation plus a margin, and no price when priority fees are off', async () => {
    rpc.unitsConsumed = 10_000
    rpc.prioritizationFees = [1_000_000]
    const connection = openConnection(rpc.url)
    const off = await prepareTransaction(connection, [transfer], [payer], policy)
    assert.deepEqual(
      {limit: off.fee.computeUnitLimit, price: off.fee.computeUnitPrice, lamports: off.fee.lamports},
      {limit: 13_000, price: 0n, lamports: 5000n},
    )
    const on = await prepareTransaction(connection, [transfer], [payer], {...policy, priorityFee: true})
    assert.equal(on.fee.computeUnitPrice, 1_000_000n)
    assert.equal(on.fee.priorityLamports, 13_000n)
    // The fees were asked for the accounts the transfer writes.
    const asked = rpc.requests.find((r) => r.method === 'getRecentPrioritizationFees')!.params[0] as string[]
    assert.deepEqual(asked, [payer.publicKey.toBase58(), transfer.keys[1]!.pubkey.toBase58()])
  })
})
