import {strict as assert} from 'node:assert'

import {Keypair, LAMPORTS_PER_SOL} from '@solana/web3.js'

import {localnetJobAuthority} from '../../../src/lib/localnet/job-authority.js'
import {SecretsClient} from '../../../src/lib/secrets/client.js'
import {walletFromBytes} from '../../../src/lib/wallet.js'
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
    t.ln.node.fund(node.publicKey, {lamports: BigInt(LAMPORTS_PER_SOL), tokens: 1n})
    const nodeRun = Keypair.generate()
    const worked = await sendInstructions(t, [workInstruction(t, node.publicKey, nodeRun.publicKey)], [node, nodeRun])
    assert.equal(worked.error, undefined, JSON.stringify(worked.error))
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

describe('localnet secrets service', function () {
  this.timeout(30_000)
  const t = useLocalnet()

  it("runs the secrets service in-process: a job's node reads exactly the secrets the job refers to", async () => {
    const url = t.ln.runtime.secretsUrl
    assert.match(url ?? '', /^http:\/\/127\.0\.0\.1:\d+$/)
    const poster = new SecretsClient({
      url: url as string,
      wallet: walletFromBytes(t.wallet.secretKey, 'poster'),
      cache: null,
    })
    await poster.set({HF_TOKEN: 'hf-value', OTHER: 'not for the job'})
    const definition = {version: '0.1', type: 'container', ops: [{id: 'x', args: {env: {T: '%%secrets.HF_TOKEN%%'}}}]}
    const {cid} = t.ln.node.content.add(Buffer.from(JSON.stringify(definition)))
    const job = await listWithWallet(t, 900n, cid)

    const node = Keypair.generate()
    t.ln.node.fund(node.publicKey, {lamports: BigInt(LAMPORTS_PER_SOL), tokens: 1n})
    const asNode = (keypair: Keypair) =>
      new SecretsClient({
        url: url as string,
        wallet: walletFromBytes(keypair.secretKey, 'node'),
        job: job.toBase58(),
        cache: null,
      })
    // Before it claims the job, the node is refused; so is any other key afterwards.
    await assert.rejects(asNode(node).list(), (error: Error & {exitCode?: number}) => error.exitCode === 6)
    const nodeRun = Keypair.generate()
    await sendInstructions(t, [workInstruction(t, node.publicKey, nodeRun.publicKey)], [node, nodeRun])
    assert.deepEqual(await asNode(node).list(), {HF_TOKEN: 'hf-value'})
    await assert.rejects(
      asNode(Keypair.generate()).list(),
      (error: Error & {exitCode?: number}) => error.exitCode === 6,
    )
    await assert.rejects(
      asNode(node).set({HF_TOKEN: 'x'}),
      (error: Error & {exitCode?: number}) => error.exitCode === 6,
    )
  })
})
