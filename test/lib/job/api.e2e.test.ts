/**
 * The library's postJob on a localnet whose node is off (`--no-node`): the checks `job post` makes before paying,
 * the localnet's node and secrets service included, through the same workflow (issue 51).
 */
import {strict as assert} from 'node:assert'

import {Connection, PublicKey} from '@solana/web3.js'

import {isGpunetError} from '../../../src/lib/errors.js'
import {connectNetwork, type GpunetNetwork, postJob} from '../../../src/lib/job/api.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'
import {oneOpDefinition} from '../../helpers/definitions.js'

const NO_NODE = 'no localnet node would run this job: the localnet was started with --no-node'

describe('postJob on a localnet no node serves', function () {
  this.timeout(90_000)
  let box: CliSandbox
  let net: GpunetNetwork
  let wallet: PublicKey
  /** The wallet's SOL: a `list` sent would have paid its fee and rent. */
  const lamports = () => new Connection(net.rpcUrl, 'confirmed').getBalance(wallet)

  before(async () => {
    box = cliSandbox()
    assert.equal((await box.run(['localnet', 'start', '--detach', '--no-node'])).code, 0)
    net = await connectNetwork({env: {...process.env, ...box.env}})
    wallet = new PublicKey(await net.walletAddress())
  })
  after(async () => {
    await net?.close()
    await box.cleanup()
  })

  it('refuses a job no node would run (exit 5), paying nothing; queueAnyway posts it with the reason', async () => {
    const definition = oneOpDefinition({cmd: ['echo', 'hi']}, {meta: {note: 'no node'}})
    const before = await lamports()
    await assert.rejects(postJob(net, definition), (error: unknown) => {
      assert.ok(isGpunetError(error))
      assert.deepEqual([error.code, error.exitCode, error.message], ['no_node', 5, NO_NODE])
      return true
    })
    assert.equal(await lamports(), before, 'nothing sent')
    const posted = await postJob(net, definition, {queueAnyway: true, timeout: 60})
    assert.deepEqual(posted.warnings, [NO_NODE])
    assert.equal(posted.network, 'localnet')
  })

  it("refuses a job referring to a secret not in the localnet's secrets service (exit 3), before paying", async () => {
    const definition = oneOpDefinition({cmd: ['echo', 'hi'], env: {TOKEN: '%%secrets.NOT_STORED%%'}})
    const before = await lamports()
    await assert.rejects(postJob(net, definition, {queueAnyway: true}), (error: unknown) => {
      assert.ok(isGpunetError(error))
      assert.deepEqual([error.code, error.exitCode, error.fields], ['secret_missing', 3, {missing: ['NOT_STORED']}])
      return true
    })
    assert.equal(await lamports(), before, 'nothing sent')
    const posted = await postJob(net, definition, {queueAnyway: true, secretsCheck: false, timeout: 60})
    assert.deepEqual(posted.warnings, [NO_NODE])
  })
})
