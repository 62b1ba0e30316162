import {strict as assert} from 'node:assert'
import {existsSync, readFileSync} from 'node:fs'

import type {PublicKey} from '@solana/web3.js'

import {localnetStatus} from '../../../src/lib/localnet/server/control.js'
import {statusLines} from '../../../src/lib/localnet/server/format.js'
import {nodeKeyFile} from '../../../src/lib/localnet/nodes/node-agent.js'
import {startTestLocalnet, type TestLocalnet} from '../../helpers/localnet.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {post, runOf, waitFor} from '../../helpers/node.js'

const NO_PODMAN = '/nonexistent/podman'
const hostNodes = (nodes: number) => ({gatewayPort: 0, podman: NO_PODMAN, hostProcesses: true, nodes})

describe('localnet with several nodes', function () {
  this.timeout(90_000)
  let t: TestLocalnet
  const dataDir = tempDir()
  before(function () {
    if (!existsSync('/bin/busybox')) this.skip()
  })
  after(async () => {
    await t?.close()
    removeDir(dataDir)
  })

  it('runs 4 jobs at once, each on its own node, and its status lists the 4 nodes', async () => {
    t = await startTestLocalnet({dataDir, node: hostNodes(4)})
    assert.equal(t.ln.agent?.agents.length, 4)
    const jobs: PublicKey[] = []
    for (let i = 0; i < 4; i++)
      jobs.push(await post(t, [{id: 'wait', type: 'container/run', args: {image: 'unused', cmd: 'sleep 30'}}]))
    for (const job of jobs) await waitFor(t, job, 'RUNNING')
    const nodes = jobs.map((job) => runOf(t, job)!.node.toBase58())
    assert.equal(new Set(nodes).size, 4, `the jobs ran on ${nodes.join(', ')}`)

    const status = await localnetStatus(dataDir)
    assert.equal(status.nodes.length, 4)
    assert.deepEqual(new Set(status.nodes.map((n) => n.address)), new Set(nodes))
    for (const node of status.nodes) {
      assert.equal(node.state, 'running')
      assert.equal(node.job, jobs[nodes.indexOf(node.address)]!.toBase58())
    }
    const text = statusLines(status).join('\n')
    assert.match(text, /4 nodes \(host-process/)
    for (const [i, job] of jobs.entries()) assert.ok(text.includes(`${nodes[i]}  running ${job.toBase58()}`), text)
  })

  it('comes back with the same node keys after a restart', async () => {
    const before = t.ln.agent!.agents.map((a) => a.address)
    const keys = [0, 1, 2, 3].map((i) => readFileSync(nodeKeyFile(dataDir, i), 'utf8'))
    await t.close()
    t = await startTestLocalnet({dataDir, wallet: t.wallet, node: hostNodes(4)})
    assert.deepEqual(
      t.ln.agent!.agents.map((a) => a.address),
      before,
    )
    assert.deepEqual(
      [0, 1, 2, 3].map((i) => readFileSync(nodeKeyFile(dataDir, i), 'utf8')),
      keys,
    )
    assert.equal(new Set(before).size, 4)
  })

  it('restarted with fewer nodes, the others leave the queue: every job goes to a running node', async () => {
    await t.close()
    t = await startTestLocalnet({dataDir, wallet: t.wallet, node: hostNodes(2)})
    const running = new Set(t.ln.agent!.agents.map((a) => a.address))
    const jobs: PublicKey[] = []
    for (let i = 0; i < 2; i++)
      jobs.push(await post(t, [{id: 'wait', type: 'container/run', args: {image: 'unused', cmd: 'sleep 30'}}]))
    for (const job of jobs) {
      await waitFor(t, job, 'RUNNING')
      assert.ok(running.has(runOf(t, job)!.node.toBase58()))
    }
  })
})
