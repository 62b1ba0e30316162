import {strict as assert} from 'node:assert'

import type {JobDefinition} from '../../../src/lib/definition/schema.js'
import {ExitCode} from '../../../src/lib/errors.js'
import {localnetRunProblem} from '../../../src/lib/job/preflight.js'

const job = (args: Record<string, unknown>, global?: Record<string, unknown>): JobDefinition =>
  ({
    version: '0.1',
    type: 'container',
    ...(global ? {global} : {}),
    ops: [{id: 'a', type: 'container/run', args: {image: 'x', ...args}}],
  }) as JobDefinition

const node = (gpus: number) => ({
  address: 'N',
  gpus,
  runtime: 'podman' as const,
  runtimeChoice: 'auto' as const,
  runningJobs: [],
})

describe('localnetRunProblem', () => {
  it('passes a job the node can run', () => {
    assert.equal(localnetRunProblem(node(0), job({})), null)
    assert.equal(localnetRunProblem(node(1), job({gpu: true})), null)
  })

  it('refuses with exit 5 when the node is off, saying how to install podman or use --host-processes', () => {
    const problem = localnetRunProblem(
      {off: 'podman is not installed (apt-get install podman runc catatonit).'},
      job({}),
    )
    assert.equal(problem?.code, 'node_off')
    assert.equal(problem?.exitCode, ExitCode.UNAVAILABLE)
    assert.match(problem!.message, /^no localnet node would run this job: the node is off\. podman is not installed/)
    assert.match(problem!.hint!, /install podman \(https:\/\/podman\.io\/docs\/installation/)
    assert.match(problem!.hint!, /gpunet localnet start --detach --host-processes/)
    assert.match(problem!.hint!, /--queue-anyway/)
  })

  it('refuses a GPU job (own args or global) on a node without GPU, naming --gpus', () => {
    for (const definition of [job({gpu: true}), job({}, {gpu: true})]) {
      const problem = localnetRunProblem(node(0), definition)
      assert.equal(problem?.code, 'no_gpu_node')
      assert.equal(problem?.exitCode, ExitCode.UNAVAILABLE)
      assert.match(problem!.hint!, /gpunet localnet start --gpus N/)
    }
    // As the network's nodes apply `global`: a GPU when the operation or `global` asks.
    assert.equal(localnetRunProblem(node(0), job({gpu: false}, {gpu: true}))?.code, 'no_gpu_node')
  })

  it('refuses on host processes an operation without a command of its own, naming it', () => {
    const host = {...node(0), runtime: 'host-process' as const}
    const problem = localnetRunProblem(host, job({}))
    assert.equal(problem?.code, 'host_needs_command')
    assert.equal(problem?.exitCode, ExitCode.UNAVAILABLE)
    assert.equal(
      problem?.message,
      "no localnet node would run this job: its node runs host processes, and operation a has no `cmd` of its own, only its image's",
    )
    assert.equal(localnetRunProblem(host, job({cmd: 'echo hi'})), null)
    assert.equal(localnetRunProblem(host, job({entrypoint: ['/bin/echo']})), null)
    assert.equal(localnetRunProblem(node(0), job({})), null, 'podman runs the image default')
  })

  it('refuses any job when the localnet runs no node (--no-node)', () => {
    const problem = localnetRunProblem(null, job({}))
    assert.equal(problem?.code, 'no_node')
    assert.match(problem!.message, /started with --no-node/)
  })
})
