import {strict as assert} from 'node:assert'

import {Keypair, LAMPORTS_PER_SOL} from '@solana/web3.js'

import {SecretsClient} from '../../../../src/lib/secrets/client.js'
import {chainJobAuthority} from '../../../../src/lib/secrets/service/chain-authority.js'
import {walletFromBytes} from '../../../../src/lib/keys/wallet.js'
import {type TestLocalnet, useLocalnet} from '../../../helpers/localnet.js'
import {listWithWallet, sendInstructions, workInstruction} from '../../../helpers/market.js'

/** The chain authority over a test localnet's RPC and content store, as the localnet's own service uses it. */
function localnetAuthority(t: TestLocalnet) {
  return chainJobAuthority({
    connection: t.connection,
    programId: t.programId,
    readContent: async (cid) => t.ln.node.content.get(cid),
    settings: {rpc: '--rpc', content: '--ipfs-gateway'},
  })
}

describe('chain job authority on a localnet (for the secrets service)', function () {
  this.timeout(30_000)
  const t = useLocalnet()

  it('knows the runs of a job, its poster, its timeout and its definition, checked against its CID', async () => {
    const authority = localnetAuthority(t)
    const definition = {
      version: '0.1',
      type: 'container',
      ops: [{id: 'x', args: {env: {TOKEN: '%%secrets.HF_TOKEN%%'}}}],
    }
    const {cid} = await t.ln.node.content.add(Buffer.from(JSON.stringify(definition)))
    const job = await listWithWallet(t, 900n, cid)

    const queued = await authority.getJob(job.toBase58())
    assert.deepEqual(queued, {
      poster: t.wallet.publicKey.toBase58(),
      state: 'queued',
      timeout: 900,
      runs: [],
      definition: cid,
    })
    assert.deepEqual(await authority.getDefinition(cid), definition)

    const node = Keypair.generate()
    t.ln.node.fund(node.publicKey, {lamports: BigInt(LAMPORTS_PER_SOL), tokens: 1n})
    const nodeRun = Keypair.generate()
    const worked = await sendInstructions(t, [workInstruction(t, node.publicKey, nodeRun.publicKey)], [node, nodeRun])
    assert.equal(worked.error, undefined, JSON.stringify(worked.error))
    const running = await authority.getJob(job.toBase58())
    assert.equal(running?.runs.length, 1)
    assert.equal(running.runs[0]?.node, node.publicKey.toBase58())
    const now = Math.floor(Date.now() / 1000)
    assert.ok(Math.abs((running.runs[0]?.time as number) - now) <= 2)
  })

  it('answers null for an address that is not a job, and 404 for a definition the store does not hold', async () => {
    const authority = localnetAuthority(t)
    assert.equal(await authority.getJob(Keypair.generate().publicKey.toBase58()), null)
    assert.equal(await authority.getJob(t.market.toBase58()), null)
    const job = await listWithWallet(t, 60n)
    const record = await authority.getJob(job.toBase58())
    await assert.rejects(authority.getDefinition(record?.definition as string), /no definition Qm/)
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
    const {cid} = await t.ln.node.content.add(Buffer.from(JSON.stringify(definition)))
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
