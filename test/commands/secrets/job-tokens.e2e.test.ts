/** Job tokens on a localnet run by the CLI: they stop working when the job is stopped or completed. */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {Keypair, PublicKey} from '@solana/web3.js'

import {computeCidV0} from '../../../src/lib/ipfs/cid.js'
import type {LocalnetStatus} from '../../../src/lib/localnet/server/control.js'
import {findVaultAddress, ipfsHashToBytes, jobsInstruction} from '../../../src/lib/market/index.js'
import {walletFromBytes} from '../../../src/lib/keys/wallet.js'
import {type CliSandbox, cliSandbox, type SandboxChain, sandboxChain} from '../../helpers/cli-localnet.js'
import {sendInstructions, workInstruction} from '../../helpers/market.js'
import {call, login} from '../../helpers/secrets.js'

/** Polls GET /secrets with `token` until it is refused (or fails after 8 s: the job cache lives at most 5 s). */
async function refusedWithin(url: string, token: string): Promise<{status: number; body: unknown}> {
  const deadline = Date.now() + 8000
  for (;;) {
    const answer = await call(url, 'GET', '/secrets', {token})
    if (answer.status !== 200 || Date.now() > deadline) return answer
    await sleep(200)
  }
}

describe('job tokens on a localnet (they die with the job)', function () {
  this.timeout(90_000)
  let box: CliSandbox
  let chain: SandboxChain
  let secretsUrl: string
  let file: string

  /** A node that waits in the market queue, so the next post runs on it at once. */
  const waitingNode = async () => {
    const node = Keypair.generate()
    const funded = await box.run(['localnet', 'fund', node.publicKey.toBase58(), '--sol', '1', '--tokens', '0.000001'])
    assert.equal(funded.code, 0, funded.stderr)
    // The airdrop also gives it the (zero) stake account `work` reads: the staking program is not emulated.
    await chain.connection.requestAirdrop(node.publicKey, 1)
    const run = Keypair.generate()
    const answer = await sendInstructions(chain, [workInstruction(chain, node.publicKey, run.publicKey)], [node, run])
    assert.equal(answer.error, undefined, JSON.stringify(answer.error))
    return node
  }
  /** Posts the job with the CLI; it runs on the waiting node; answers the job and the node's job token. */
  const runningJob = async (node: Keypair) => {
    // The localnet's own node is off (the test acts as the node): --queue-anyway posts all the same.
    const posted = await box.run(['job', 'post', '--queue-anyway', '--file', file, '--timeout', '3600', '--json'])
    assert.equal(posted.code, 0, posted.stderr)
    const {job, status} = JSON.parse(posted.stdout) as {job: string; status: string}
    assert.equal(status, 'RUNNING')
    const token = await login(secretsUrl, walletFromBytes(node.secretKey, 'node'), {job})
    assert.deepEqual((await call(secretsUrl, 'GET', '/secrets', {token})).body, {HF_TOKEN: 'hf-value'})
    return {job, token}
  }

  before(async () => {
    box = cliSandbox()
    file = join(box.dir, 'job.json')
    writeFileSync(
      file,
      JSON.stringify({
        version: '0.1',
        type: 'container',
        ops: [
          {
            id: 'a',
            type: 'container/run',
            args: {image: 'docker.io/library/ubuntu:24.04', env: {T: '%%secrets.HF_TOKEN%%'}},
          },
        ],
      }),
    )
    assert.equal((await box.run(['localnet', 'start', '--detach', '--no-node'])).code, 0)
    chain = await sandboxChain(box)
    const status = JSON.parse((await box.run(['localnet', 'status', '--json'])).stdout) as LocalnetStatus
    secretsUrl = status.secretsUrl as string
    const set = await box.run(['secrets', 'set', 'HF_TOKEN', '--value', 'hf-value'])
    assert.equal(set.code, 0, set.stderr)
  })
  after(() => box.cleanup())

  it('refuses a token obtained while the job ran once `job stop` ended it', async () => {
    const {job, token} = await runningJob(await waitingNode())
    const stopped = await box.run(['job', 'stop', job])
    assert.equal(stopped.code, 0, stopped.stderr)
    const answer = await refusedWithin(secretsUrl, token)
    assert.equal(answer.status, 401, JSON.stringify(answer.body))
    assert.equal((answer.body as {error: {code: string}}).error.code, 'job_ended')
  })

  it('refuses a token obtained while the job ran once the node completed it', async () => {
    const node = await waitingNode()
    const {job, token} = await runningJob(node)
    const result = computeCidV0(new TextEncoder().encode('{"status":"succeeded"}')).cid
    const run = (
      await chain.connection.getProgramAccounts(chain.programId, {filters: [{memcmp: {offset: 8, bytes: job}}]})
    )[0]!.pubkey
    const finish = jobsInstruction(
      chain.programId,
      'finish',
      {
        job: new PublicKey(job),
        run,
        market: chain.market,
        vault: findVaultAddress(chain.programId, chain.market, chain.mint)[0],
        deposit: getAssociatedTokenAddressSync(chain.mint, chain.wallet.publicKey),
        user: getAssociatedTokenAddressSync(chain.mint, node.publicKey),
        payerRun: chain.wallet.publicKey,
        payerJob: chain.wallet.publicKey,
        authority: node.publicKey,
        tokenProgram: TOKEN_PROGRAM_ID,
      },
      {ipfsResult: ipfsHashToBytes(result)},
    )
    const answer = await sendInstructions(chain, [finish], [node])
    assert.equal(answer.error, undefined, JSON.stringify(answer.error))
    const refused = await refusedWithin(secretsUrl, token)
    assert.equal(refused.status, 401, JSON.stringify(refused.body))
    assert.equal((refused.body as {error: {code: string}}).error.code, 'job_ended')
  })
})
