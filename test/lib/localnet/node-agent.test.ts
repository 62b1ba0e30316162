import {strict as assert} from 'node:assert'
import {existsSync} from 'node:fs'
import {createServer} from 'node:net'
import {setTimeout as sleep} from 'node:timers/promises'

import {getAssociatedTokenAddressSync} from '@solana/spl-token'

import {HOST_PROCESS_NOTICE} from '../../../src/lib/node/runtime/host-process.js'
import {removeDir, startTestLocalnet, tempDir, type TestLocalnet, useLocalnet} from '../../helpers/localnet.js'
import {post, result, viaGateway, waitFor} from '../../helpers/node.js'

const NO_PODMAN = '/nonexistent/podman'

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const {port} = server.address() as {port: number}
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The test wallet's payment tokens, in base units. */
async function tokens(t: TestLocalnet): Promise<bigint> {
  const account = getAssociatedTokenAddressSync(t.mint, t.wallet.publicKey, true)
  return BigInt((await t.connection.getTokenAccountBalance(account)).value.amount)
}

describe('localnet node without podman', function () {
  this.timeout(30_000)
  const t = useLocalnet({node: {gatewayPort: 0, podman: NO_PODMAN}})

  it('is off, saying why, unless host processes are turned on', () => {
    assert.equal(t.ln.runtime.gatewayUrl, null)
    const node = t.ln.runtime.node
    assert.ok(node && 'off' in node, JSON.stringify(node))
    assert.match(node.off, /podman is not installed.*--host-processes/)
  })
})

describe('localnet node with host processes (opt-in)', function () {
  this.timeout(30_000)
  const lifetimeMs = 2500
  const t = useLocalnet({
    node: {
      gatewayPort: 0,
      podman: NO_PODMAN,
      hostProcesses: true,
      healthIntervalMs: 100,
      serviceLifetimeMs: lifetimeMs,
    },
  })
  before(function () {
    if (!existsSync('/bin/busybox')) this.skip()
  })

  it('runs the job on the host, and every result says so', async () => {
    const job = await post(t, [{id: 'hi', type: 'container/run', args: {image: 'unused', cmd: 'echo on-host'}}])
    await waitFor(t, job, 'COMPLETED')
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'success')
    assert.equal(doc.isolated, false)
    assert.ok(doc.notices.includes(HOST_PROCESS_NOTICE))
    assert.equal(doc.ops[0]!.stdout, 'on-host\n')
  })

  it('takes the service down after its lifetime, stopping the operation without failing the job', async () => {
    const port = await freePort()
    const cmd = `echo served > index.html && exec /bin/busybox httpd -f -p 127.0.0.1:${port} -h .`
    const job = await post(t, [{id: 'web', type: 'container/run', args: {image: 'unused', cmd, expose: port}}])
    await waitFor(t, job, 'RUNNING')
    const started = Date.now()
    let answer = await viaGateway(t, job)
    while (answer.status !== 200 && Date.now() - started < lifetimeMs) {
      await sleep(50)
      answer = await viaGateway(t, job)
    }
    assert.deepEqual(answer, {status: 200, body: 'served\n'})
    await waitFor(t, job, 'COMPLETED')
    assert.ok(Date.now() - started >= lifetimeMs - 500)
    assert.equal((await viaGateway(t, job)).status, 404)
    const {doc} = await result(t, job)
    assert.equal(doc.status, 'success')
    assert.equal(doc.ops[0]!.stopped, true)
    assert.ok(
      doc.notices.some((n) => /taken down after its lifetime of 3 s/.test(n)),
      doc.notices.join(' | '),
    )
  })
})

describe('localnet node across a restart', function () {
  this.timeout(30_000)
  const node = {gatewayPort: 0, podman: NO_PODMAN, hostProcesses: true}
  const dataDir = tempDir()
  after(() => removeDir(dataDir))

  it('fails the job it was running when the localnet stopped, refunding the unused time', async function () {
    if (!existsSync('/bin/busybox')) this.skip()
    const first = await startTestLocalnet({dataDir, node})
    const job = await post(first, [{id: 'long', type: 'container/run', args: {image: 'unused', cmd: 'sleep 30'}}])
    await waitFor(first, job, 'RUNNING')
    const deposited = await tokens(first)
    await first.close()

    const second = await startTestLocalnet({dataDir, node, wallet: first.wallet})
    try {
      assert.deepEqual(await waitFor(second, job, 'COMPLETED'), ['COMPLETED'])
      const {doc} = await result(second, job)
      assert.equal(doc.status, 'failed')
      assert.equal(doc.error?.code, 'interrupted')
      assert.deepEqual(doc.ops, [])
      assert.ok((await tokens(second)) > deposited, 'the unused deposit came back')
    } finally {
      await second.close()
    }
  })
})
