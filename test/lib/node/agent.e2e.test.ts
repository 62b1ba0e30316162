import {strict as assert} from 'node:assert'
import {createHash} from 'node:crypto'
import {once} from 'node:events'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {setTimeout as sleep} from 'node:timers/promises'

import {getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {PublicKey} from '@solana/web3.js'

import type {JobDefinition} from '../../../src/lib/definition/schema.js'
import {decodeJobAccount, findVaultAddress, jobsInstruction} from '../../../src/lib/market/index.js'
import {serviceUrls} from '../../../src/lib/market/service-url.js'
import {SecretsClient} from '../../../src/lib/secrets/client.js'
import {walletFromBytes} from '../../../src/lib/keys/wallet.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {sendInstructions} from '../../helpers/market.js'
import {
  gatewayGet,
  post,
  postNetwork,
  result,
  runOf,
  state,
  viaGateway,
  waitFor,
  watchFinished,
} from '../../helpers/node.js'
import {podman, requirePodman, TEST_IMAGE} from '../../helpers/podman.js'

function op(id: string, args: Record<string, unknown>) {
  return {id, type: 'container/run', args: {image: TEST_IMAGE, ...args}}
}

describe('localnet node agent (podman)', function () {
  this.timeout(120_000)
  const pod = requirePodman()
  const t = useLocalnet({node: {gatewayPort: 0, pull: 'never', healthIntervalMs: 200, gpus: 0}})

  /** The secrets service as the test wallet, the poster of every job here. */
  const posterSecrets = () =>
    new SecretsClient({
      url: t.ln.runtime.secretsUrl!,
      wallet: walletFromBytes(t.wallet.secretKey, 'poster'),
      cache: null,
    })

  it('publishes the gateway and the node in the localnet status', () => {
    assert.match(t.ln.runtime.gatewayUrl ?? '', /^http:\/\/node\.localhost:\d+$/)
    const node = t.ln.runtime.node
    assert.ok(node && 'address' in node, JSON.stringify(node))
    assert.deepEqual({gpus: node.gpus, runtime: node.runtime}, {gpus: 0, runtime: 'podman'})
  })

  it('runs hello world: RUNNING at once (the idle node waits in the queue) -> COMPLETED, logs, node paid', async () => {
    const posted = Date.now()
    const job = await post(t, [op('hello', {cmd: 'sleep 1; echo hello world; echo to-stderr >&2'})])
    const toRunning = await waitFor(t, job, 'RUNNING')
    const running = Date.now()
    const toCompleted = await waitFor(t, job, 'COMPLETED')
    assert.deepEqual([...toRunning, ...toCompleted.slice(1)], ['RUNNING', 'COMPLETED'])
    process.stderr.write(`      (list -> RUNNING ${running - posted} ms, -> COMPLETED ${Date.now() - posted} ms)\n`)
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'success')
    assert.equal(doc.isolated, true)
    assert.equal(doc.job, job.toBase58())
    assert.equal(doc.node, (t.ln.runtime.node as {address: string}).address)
    assert.equal(doc.ops.length, 1)
    assert.equal(doc.ops[0]!.exitCode, 0)
    assert.equal(doc.ops[0]!.stdout, 'hello world\n')
    assert.equal(doc.ops[0]!.stderr, 'to-stderr\n')
    const state = doc.raw.opStates[0]!
    assert.ok(state.endTime! - state.startTime! >= 1000)
    const nodeTokens = await t.connection.getTokenAccountBalance(
      getAssociatedTokenAddressSync(t.mint, new PublicKey(doc.node), true),
    )
    assert.ok(Number(nodeTokens.value.amount) > 0, 'the node earned price x elapsed')
  })

  it('fails the job at the first operation that exits non-zero, with its exit code', async () => {
    const job = await post(t, [op('first', {cmd: 'echo one; exit 3'}), op('second', {cmd: 'echo never'})])
    await waitFor(t, job, 'COMPLETED')
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'failed')
    assert.deepEqual(doc.error, {
      code: 'operation_failed',
      message: 'Operation first exited with code 3.',
      op: 'first',
      exitCode: 3,
    })
    assert.deepEqual(
      doc.ops.map((o) => [o.id, o.exitCode, o.stdout]),
      [['first', 3, 'one\n']],
    )
  })

  it('delivers referenced secrets to the job, never into its result; the job login reads nothing else', async () => {
    const value = 's3cr3t-value-for-the-job'
    await posterSecrets().set({HF_TOKEN: value, OTHER: 'unreferenced-value'})
    const job = await post(t, [
      op('use', {
        env: {TOKEN: '%%secrets.HF_TOKEN%%'},
        cmd: 'echo "token=$TOKEN"; printf %s "$TOKEN" | sha256sum; sleep 2',
      }),
    ])
    await waitFor(t, job, 'RUNNING')
    const asNode = new SecretsClient({
      url: t.ln.runtime.secretsUrl!,
      wallet: walletFromBytes(t.ln.agent!.agent.chain.keypair.secretKey, 'node'),
      job: job.toBase58(),
      cache: null,
    })
    assert.deepEqual(await asNode.list(), {HF_TOKEN: value})
    await assert.rejects(asNode.set({HF_TOKEN: 'x'}), (error: Error & {exitCode?: number}) => error.exitCode === 6)

    await waitFor(t, job, 'COMPLETED')
    const {text, doc} = await result(t, job)
    assert.equal(doc.status, 'success')
    assert.ok(!text.includes(value), 'the value is not in the result')
    const digest = createHash('sha256').update(value).digest('hex')
    assert.equal(doc.ops[0]!.stdout, `token=%%secrets.HF_TOKEN%%\n${digest}  -\n`)
  })

  it('fails a job that refers to a secret its poster does not have, naming it', async () => {
    const job = await post(t, [op('use', {env: {KEY: '%%secrets.NOT_STORED%%'}, cmd: 'echo ran'})])
    await waitFor(t, job, 'COMPLETED')
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'failed')
    assert.equal(doc.ops.length, 0, 'no operation ran')
    assert.equal(doc.error?.code, 'secret_missing')
    assert.match(doc.error?.message ?? '', /does not have: NOT_STORED\./)
  })

  it('loads an S3 resource signed with secret keys into the container; a missing object fails the job', async () => {
    const secretKey = 'secret-access-key-never-shown'
    await posterSecrets().set({S3_SECRET: secretKey})
    const authorizations: string[] = []
    const server = createServer((req, res) => {
      authorizations.push(req.headers.authorization ?? '')
      if (req.url === '/bucket/weights.txt') res.end('resource content\n')
      else res.writeHead(404).end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const resource = {
        type: 'S3',
        target: '/opt/res',
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        bucket: 'bucket',
        IAM: {ACCESS_KEY_ID: 'AKID', REGION: 'us-east-1', SECRET_ACCESS_KEY: '%%secrets.S3_SECRET%%'},
      }
      const job = await post(t, [
        op('read', {resources: [{...resource, files: ['weights.txt']}], cmd: 'cat /opt/res/weights.txt'}),
      ])
      await waitFor(t, job, 'COMPLETED')
      const {text, doc} = await result(t, job)
      assert.equal(doc.status, 'success', text)
      assert.equal(doc.ops[0]!.stdout, 'resource content\n')
      assert.match(authorizations[0] ?? '', /^AWS4-HMAC-SHA256 Credential=AKID\/\d{8}\/us-east-1\/s3\/aws4_request, /)

      const failing = await post(t, [op('read', {resources: [{...resource, files: ['gone.txt']}], cmd: 'echo ran'})])
      await waitFor(t, failing, 'COMPLETED')
      const failed = await result(t, failing)
      assert.equal(failed.doc.status, 'failed')
      assert.equal(failed.doc.ops.length, 0, 'the operation never started')
      assert.equal(failed.doc.error?.code, 'resource_failed')
      assert.match(
        failed.doc.error?.message ?? '',
        /^S3 resource for \/opt\/res: gone\.txt: 127\.0\.0\.1:\d+ answered HTTP 404\.$/,
      )
      assert.ok(!failed.text.includes(secretKey) && !text.includes(secretKey), 'no key in the results')
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('serves an exposed port through the gateway (404 before ready), and takes it down when the job is ended', async () => {
    const job = await post(t, [
      op('web', {
        cmd: 'mkdir -p /www && echo hi-from-job > /www/index.html && sleep 2 && exec httpd -f -p 8080 -h /www',
        expose: [{port: 8080, health_checks: [{type: 'http', method: 'GET', path: '/', expected_status: 200}]}],
      }),
    ])
    await waitFor(t, job, 'RUNNING')
    const early = await viaGateway(t, job)
    assert.equal(early.status, 404)
    assert.match(early.body, /not_found/)
    let answer = early
    const deadline = Date.now() + 30_000
    while (answer.status !== 200 && Date.now() < deadline) {
      await sleep(100)
      answer = await viaGateway(t, job)
    }
    assert.deepEqual(answer, {status: 200, body: 'hi-from-job\n'})

    const released = once(t.ln.agent!.agent, 'released')
    // The poster ends the job (what `job stop` sends).
    const run = runOf(t, job)!
    const account = decodeJobAccount(t.ln.node.chain.account(job)!.data)
    const end = jobsInstruction(
      t.programId,
      'end',
      {
        job,
        market: t.market,
        run: run.address,
        deposit: getAssociatedTokenAddressSync(t.mint, account.payer, true),
        user: getAssociatedTokenAddressSync(t.mint, run.node, true),
        vault: findVaultAddress(t.programId, t.market, t.mint)[0],
        payer: run.payer,
        authority: t.wallet.publicKey,
        tokenProgram: TOKEN_PROGRAM_ID,
      },
      {},
    )
    const sent = await sendInstructions(t, [end], [t.wallet])
    assert.equal(sent.error, undefined, JSON.stringify(sent.error))
    // The program's `end` settles the job as Done, without a result.
    assert.equal(state(t, job), 'COMPLETED')
    let after = await viaGateway(t, job)
    const stopDeadline = Date.now() + 15_000
    while (after.status !== 404 && Date.now() < stopDeadline) {
      await sleep(100)
      after = await viaGateway(t, job)
    }
    assert.equal(after.status, 404)
    let containers = 'x'
    while (containers && Date.now() < stopDeadline + 15_000) {
      containers = (
        await podman(pod.dataDir(), ['ps', '-q', '--filter', `label=gpunet.job=${job.toBase58()}`])
      ).stdout.trim()
      if (containers) await sleep(200)
    }
    assert.equal(containers, '', 'the container is gone')
    // A stopped job has no run to finish: the node records what ran with `complete`, as the network's nodes do.
    assert.deepEqual(await released, [job.toBase58()])
    const recordBy = Date.now() + 10_000
    while (decodeJobAccount(t.ln.node.chain.account(job)!.data).ipfsResult.every((b) => b === 0)) {
      assert.ok(Date.now() < recordBy, 'the node recorded the stopped job’s result')
      await sleep(100)
    }
    assert.equal((await result(t, job)).doc.status, 'stopped')
    assert.deepEqual(t.ln.agent!.agent.runningJobs, [])
  })

  it('serves every exposed port at the URLs job post prints, each once its own health checks pass', async () => {
    const check = {type: 'http', method: 'GET', path: '/', expected_status: 200}
    const args = {
      cmd:
        'mkdir -p /a /b && echo page-a > /a/index.html && echo page-b > /b/index.html && httpd -p 8080 -h /a && ' +
        'sleep 2 && httpd -p 9090 -h /b && sleep 4',
      expose: [
        {port: 8080, health_checks: [check]},
        {port: 9090, health_checks: [check]},
      ],
    }
    const ops = [op('web', args)]
    const job = await post(t, ops)
    const definition = {version: '0.1', type: 'container', ops} as JobDefinition
    const urls = serviceUrls('localnet', job.toBase58(), definition, {gatewayUrl: t.ln.runtime.gatewayUrl})
    assert.deepEqual(
      urls.map((u) => u.port),
      [8080, 9090],
    )
    await waitFor(t, job, 'RUNNING')
    const answers = async () => Promise.all(urls.map(async ({url}) => (await gatewayGet(url)).body.trim()))
    let seen = await answers()
    const deadline = Date.now() + 20_000
    while (seen[0] !== 'page-a' && Date.now() < deadline) seen = await answers().finally(() => sleep(50))
    assert.equal(seen[0], 'page-a')
    assert.match(seen[1]!, /not_found/, 'the second port is not ready before its server starts')
    while (seen[1] !== 'page-b' && Date.now() < deadline) seen = await answers().finally(() => sleep(50))
    assert.deepEqual(seen, ['page-a', 'page-b'])
    await waitFor(t, job, 'COMPLETED')
    assert.equal((await result(t, job)).doc.status, 'success')
    assert.equal((await gatewayGet(urls[1]!.url)).status, 404, 'taken down when the operation ends')
  })

  it('takes a job that needs a GPU it lacks and fails it at once, saying why; the next job runs', async () => {
    const finished = watchFinished(t)
    const gpuJob = await post(t, [op('gpu', {gpu: true, cmd: 'echo gpu'})])
    const next = await post(t, [op('after', {cmd: 'echo next'})])
    const failed = await finished(gpuJob)
    assert.equal(failed.status, 'failed')
    assert.equal(failed.error?.code, 'gpu_unavailable')
    assert.match(failed.error!.message, /needs a GPU .* this node has none/)
    assert.deepEqual(failed.ops, [], 'nothing ran')
    assert.equal(state(t, gpuJob), 'COMPLETED')
    assert.deepEqual((await result(t, gpuJob)).doc, failed, 'the result on chain is the one the event carried')
    const ran = await finished(next)
    assert.equal(ran.status, 'success')
    assert.equal(ran.ops[0]!.stdout, 'next\n')
  })

  it('takes a job whose image it cannot get and fails it, saying why', async () => {
    const finished = watchFinished(t)
    const job = await post(t, [{id: 'pull', type: 'container/run', args: {image: 'localhost/gpunet-missing:none'}}])
    const failed = await finished(job)
    assert.equal(failed.status, 'failed')
    assert.match(JSON.stringify(failed), /gpunet-missing/)
    assert.equal(state(t, job), 'COMPLETED')
  })

  it("runs the network's members in containers: global as the node applies it, a shared volume, groups, restarts", async () => {
    const job = await postNetwork(t, {
      version: '0.1',
      type: 'container',
      global: {env: {WHO: 'global'}, work_dir: '/tmp', variables: {WORD: 'hello'}},
      ops: [
        {id: 'vol', type: 'container/create-volume', args: {name: 'shared'}, execution: {group: 'g'}},
        {
          id: 'write',
          type: 'container/run',
          args: {
            image: TEST_IMAGE,
            cmd: 'echo %%global.variables.WORD%% > /data/f; echo "$WHO $(pwd)"',
            work_dir: '',
            volumes: [{name: 'shared', dest: '/data'}],
          },
          execution: {group: 'g', depends_on: ['vol']},
        },
        {
          id: 'read',
          type: 'container/run',
          args: {
            image: TEST_IMAGE,
            cmd: 'cat /data/f; echo try; exit 3',
            volumes: [{name: 'shared', dest: '/data'}],
            restart_policy: {policy: 'on-failure', restart_tries: 1},
          },
        },
      ],
    })
    await waitFor(t, job, 'COMPLETED', 60_000)
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'failed')
    assert.deepEqual(doc.error, {
      code: 'operation_failed',
      message: 'Operation read exited with code 3.',
      op: 'read',
      exitCode: 3,
    })
    const byId = Object.fromEntries(doc.ops.map((o) => [o.id, o]))
    // An empty work_dir takes the global one, as on the network's nodes; env merges under the operation's own.
    assert.equal(byId.write!.stdout, 'global /tmp\n')
    assert.equal(byId.write!.status, 'success')
    assert.equal(byId.read!.stdout, 'hello\ntry\nhello\ntry\n')
    assert.deepEqual(
      doc.raw.opStates.find((o) => o.operationId === 'read')!.gpunet.restarts!.map((r) => r.exitCode),
      [3],
    )
  })
})
