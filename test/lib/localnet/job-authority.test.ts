import {strict as assert} from 'node:assert'

import {Keypair, LAMPORTS_PER_SOL} from '@solana/web3.js'

import {localnetJobAuthority} from '../../../src/lib/localnet/job-authority.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {listWithWallet, sendInstructions, workInstruction} from '../../helpers/market.js'

describe('localnet job authority (for the secrets service)', function () {
  this.timeout(30_000)
  const t = useLocalnet()

  it('knows the node running a job, its poster, its paid end and its definition', async () => {
    const authority = localnetJobAuthority(t.ln.node)
    const definition = {
      version: '0.1',
      type: 'container',
      ops: [{id: 'x', args: {env: {TOKEN: '%%secrets.HF_TOKEN%%'}}}],
    }
    const {cid} = t.ln.node.content.add(Buffer.from(JSON.stringify(definition)))
    const job = await listWithWallet(t, 900n, cid)

    const queued = await authority.getJob(job.toBase58())
    assert.deepEqual(queued && {node: queued.node, poster: queued.poster, running: queued.running}, {
      node: null,
      poster: t.wallet.publicKey.toBase58(),
      running: false,
    })
    assert.deepEqual(await authority.getDefinition(job.toBase58()), definition)

    const node = Keypair.generate()
    t.ln.node.fund(node.publicKey, {lamports: BigInt(LAMPORTS_PER_SOL)})
    const nodeRun = Keypair.generate()
    await sendInstructions(t, [workInstruction(t, node.publicKey, nodeRun.publicKey)], [node, nodeRun])
    const running = await authority.getJob(job.toBase58())
    assert.equal(running?.node, node.publicKey.toBase58())
    assert.equal(running?.running, true)
    const now = Math.floor(Date.now() / 1000)
    assert.ok(running.endsAt >= now + 899 && running.endsAt <= now + 901, String(running.endsAt - now))
  })

  it('answers null for an address that is not a job, and fails for a definition it does not hold', async () => {
    const authority = localnetJobAuthority(t.ln.node)
    assert.equal(await authority.getJob(Keypair.generate().publicKey.toBase58()), null)
    assert.equal(await authority.getJob(t.market.toBase58()), null)
    assert.equal(await authority.getJob('not an address'), null)
    const job = await listWithWallet(t, 60n)
    await assert.rejects(authority.getDefinition(job.toBase58()), /the content store does not hold Qm/)
  })
})
