/** A localnet node's image cache: the simulated pull of an image it lacks, once, and its one spelling of images. */
import {strict as assert} from 'node:assert'

import {canonicalImage, pullSeconds, withSimulatedPulls} from '../../../src/lib/localnet/nodes/simulated-pull.js'
import type {OperationPlan} from '../../../src/lib/node/operation-plan.js'
import type {ContainerRuntime, RunningOperation} from '../../../src/lib/node/runtime/runtime.js'

/** A runtime that records when each start came. */
function recorder(): {runtime: ContainerRuntime; starts: number[]} {
  const starts: number[] = []
  const runtime = {
    kind: 'host-process',
    start: async () => {
      starts.push(Date.now())
      return {} as RunningOperation
    },
    run: async () => {
      starts.push(Date.now())
      return {} as never
    },
    exec: () => {
      throw new Error('not used')
    },
    sample: async () => null,
  } as unknown as ContainerRuntime
  return {runtime, starts}
}

const plan = (image: string) => ({image}) as OperationPlan

describe('simulated image pulls', () => {
  it('spells an image one way: Docker Hub, library/, latest', () => {
    assert.equal(canonicalImage('ubuntu'), 'docker.io/library/ubuntu:latest')
    assert.equal(canonicalImage('ubuntu:24.04'), 'docker.io/library/ubuntu:24.04')
    assert.equal(canonicalImage('vllm/vllm-openai'), 'docker.io/vllm/vllm-openai:latest')
    assert.equal(canonicalImage('ghcr.io/org/app:1'), 'ghcr.io/org/app:1')
    assert.equal(canonicalImage('localhost:5000/app'), 'localhost:5000/app:latest')
    assert.equal(canonicalImage('alpine@sha256:abc'), 'docker.io/library/alpine@sha256:abc')
  })

  it('takes the size at the rate, divided by the scale', () => {
    const sim = {rateMbPerSecond: 50, scale: 1, sizeMb: (image: string) => (image.includes('big') ? 9800 : 500)}
    assert.equal(pullSeconds(sim, 'ubuntu'), 10)
    assert.equal(pullSeconds(sim, 'org/big'), 196)
    assert.equal(pullSeconds({...sim, scale: 4}, 'ubuntu'), 2.5)
  })

  it('waits for the pull of an image the node lacks, once; one it holds starts at once', async () => {
    const {runtime, starts} = recorder()
    const cached = new Set(['docker.io/library/alpine:3'])
    const lines: string[] = []
    // 10 MB at 50 MB/s, 1x: 200 ms.
    const node = withSimulatedPulls(runtime, cached, {rateMbPerSecond: 50, scale: 1, sizeMb: () => 10}, (l) =>
      lines.push(l),
    )
    let at = Date.now()
    await node.start(plan('alpine:3'), {jobId: 'j'})
    assert.ok(starts[0]! - at < 100, 'held: no wait')
    at = Date.now()
    await Promise.all([node.start(plan('ubuntu:24.04'), {jobId: 'j'}), node.run(plan('ubuntu:24.04'), {jobId: 'j'})])
    assert.ok(starts[1]! - at >= 190, `pulled: ${starts[1]! - at} ms`)
    assert.ok(cached.has('docker.io/library/ubuntu:24.04'))
    at = Date.now()
    await node.start(plan('docker.io/library/ubuntu:24.04'), {jobId: 'j'})
    assert.ok(starts[3]! - at < 100, 'held now')
    assert.deepEqual(lines, [
      'pulling docker.io/library/ubuntu:24.04 (10 MB at 50 MB/s, simulated): 0.2 s',
      'pulled docker.io/library/ubuntu:24.04',
    ])
  })

  it('stops holding up a job that ended', async () => {
    const {runtime, starts} = recorder()
    const node = withSimulatedPulls(runtime, new Set(), {rateMbPerSecond: 1, scale: 1, sizeMb: () => 60}, () => {})
    const abort = new AbortController()
    const at = Date.now()
    setTimeout(() => abort.abort(), 50)
    await node.start(plan('ubuntu'), {jobId: 'j', signal: abort.signal})
    assert.ok(starts[0]! - at < 1000, 'the 60 s pull no longer waited for')
  })
})
