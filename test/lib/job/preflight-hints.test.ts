/**
 * What `job post` says when no localnet node would run a job, word for word: the hint is the user's way out
 * (mutation testing found every hint could be emptied unnoticed).
 */
import {strict as assert} from 'node:assert'

import type {JobDefinition} from '../../../src/lib/definition/schema.js'
import type {GpunetError} from '../../../src/lib/errors.js'
import {localnetRunProblem} from '../../../src/lib/job/preflight.js'

const job = (gpu: boolean): JobDefinition =>
  ({
    version: '0.1',
    type: 'container',
    ops: [{id: 'a', type: 'container/run', args: {image: 'x', gpu}}],
  }) as JobDefinition

const ANYWAY = 'or pass --queue-anyway to post it all the same (it stays QUEUED until a node takes it)'
const said = (problem: GpunetError | null) =>
  problem && {code: problem.code, exitCode: problem.exitCode, message: problem.message, hint: problem.hint}

describe('localnetRunProblem: messages and hints', () => {
  it('no node (--no-node)', () => {
    assert.deepEqual(said(localnetRunProblem(null, job(false))), {
      code: 'no_node',
      exitCode: 5,
      message: 'no localnet node would run this job: the localnet was started with --no-node',
      hint: `restart it with its node (\`gpunet localnet stop && gpunet localnet start --detach\`), ${ANYWAY}`,
    })
  })

  it('the node is off', () => {
    assert.deepEqual(said(localnetRunProblem({off: 'podman is not installed.'}, job(false))), {
      code: 'node_off',
      exitCode: 5,
      message: 'no localnet node would run this job: the node is off. podman is not installed.',
      hint:
        'install podman (https://podman.io/docs/installation, e.g. `sudo apt-get install podman`) and restart the ' +
        'localnet (`gpunet localnet stop && gpunet localnet start --detach`), or restart it with ' +
        `\`gpunet localnet start --detach --host-processes\` to run jobs on this machine without isolation, ${ANYWAY}`,
    })
  })

  it('a GPU job on a node without GPU', () => {
    const node = {address: 'N', gpus: 0, runtime: 'podman' as const, runtimeChoice: 'auto' as const, runningJobs: []}
    assert.deepEqual(said(localnetRunProblem(node, job(true))), {
      code: 'no_gpu_node',
      exitCode: 5,
      message: 'no localnet node would run this job: it needs a GPU and the node has none',
      hint: `start the localnet on a machine that has GPUs (\`gpunet localnet start --gpus N\`), or drop \`gpu: true\`, ${ANYWAY}`,
    })
  })
})
