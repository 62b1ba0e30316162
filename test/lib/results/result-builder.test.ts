/** How a failed operation reads in a job's result (issue 25: a failed pull said only "exited with code 125"). */
import {strict as assert} from 'node:assert'

import type {LogEntry} from '../../../src/lib/results/flow-state.js'
import {extractResults, mergeRuns, ResultBuilder} from '../../../src/lib/results/result-builder.js'
import {podmanFailure} from '../../../src/lib/node/runtime/podman.js'
import type {OperationResult} from '../../../src/lib/results/operation-result.js'

const at = '2026-11-25T10:00:00.000Z'
const line = (type: LogEntry['type'], log: string): LogEntry => ({type, log, timestamp: at})

function result(exitCode: number, more: Partial<OperationResult> = {}): OperationResult {
  return {
    operationId: 'op',
    runtime: 'podman',
    exitCode,
    startedAt: at,
    endedAt: at,
    logs: [],
    droppedLines: 0,
    droppedBytes: 0,
    stdout: '',
    stderr: '',
    stopped: false,
    isolated: true,
    notices: [],
    ...more,
  }
}

describe('node/results: failures', () => {
  it("names the runtime's reason when the runtime, not the command, failed", () => {
    const builder = new ResultBuilder('job', 'node')
    const reason = 'docker.io/library/nope:1: image not known'
    assert.equal(builder.add(result(125, {runtimeFailure: reason}), {acceptStop: false}), false)
    assert.deepEqual(builder.build().gpunet?.failure, {
      code: 'operation_failed',
      message: `Operation op could not run: ${reason} (podman exited with code 125).`,
      op: 'op',
      exitCode: 125,
    })
  })

  it("says only the exit code for the command's own failure", () => {
    const builder = new ResultBuilder('job', 'node')
    builder.add(result(3), {acceptStop: false})
    assert.equal(builder.build().gpunet?.failure?.message, 'Operation op exited with code 3.')
  })

  it("an operation the job's timeout stopped is recorded as the network's nodes record it: success, jobExpired", () => {
    const builder = new ResultBuilder('job', 'node')
    assert.equal(builder.add(result(143, {stopped: true}), {acceptStop: false, jobExpired: true}), false)
    const built = builder.build()
    // nosana-ci/nosana-cli: getStatus maps the stop reason `expired` to `success` for the flow and its operations,
    // and runTaskManagerOperation sets the operation's diagnostics reason.
    assert.equal(built.status, 'success')
    assert.equal(built.opStates[0]!.status, 'success')
    assert.deepEqual(built.opStates[0]!.diagnostics.reason, {
      hostShutDown: false,
      jobStopped: false,
      jobExpired: true,
      reason: 'Operation stopped due to flow expired',
    })
    assert.equal(built.errors, undefined)
    assert.equal(built.gpunet.failure, undefined)
    // Its poster's end is still a stop, with the network's reason.
    const ended = new ResultBuilder('job', 'node')
    ended.add(result(143, {stopped: true}), {acceptStop: false, jobStopped: true})
    ended.stop()
    const stopped = ended.build()
    assert.deepEqual(
      [stopped.status, stopped.opStates[0]!.status, stopped.opStates[0]!.diagnostics.reason.reason],
      ['stopped', 'stopped', 'Operation stopped due to flow stopped'],
    )
    // Exiting non-zero on its own, before any stop, is its own failure still.
    const own = new ResultBuilder('job', 'node')
    own.add(result(3), {acceptStop: false, jobExpired: true})
    assert.equal(own.build().gpunet?.failure?.code, 'operation_failed')
  })

  it("reads podman's reason from its last Error: line, for podman's own exit codes only", () => {
    const logs = [
      line('stderr', 'Error: first\n'),
      line('stdout', 'Error: not stderr\n'),
      line('stderr', 'Error: last one\n'),
    ]
    assert.equal(podmanFailure(125, logs), 'last one')
    assert.equal(podmanFailure(126, logs), 'last one')
    assert.equal(podmanFailure(127, logs), 'last one')
    assert.equal(podmanFailure(1, logs), undefined, "the command's own exit code")
    assert.equal(podmanFailure(124, logs), undefined)
    assert.equal(podmanFailure(128, logs), undefined)
    assert.equal(podmanFailure(125, [line('stderr', 'no prefix\n'), line('stdout', 'Error: x\n')]), undefined)
  })

  it('names the ways out when podman could not get the image (offline, or --pull never without a local copy)', () => {
    const offline =
      'Error: initializing source docker://ubuntu:24.04: pinging container registry registry-1.docker.io: dial tcp: lookup registry-1.docker.io: no such host\n'
    const notLocal = 'Error: docker.io/library/nginx:1.27: image not known\n'
    for (const text of [offline, notLocal]) {
      const reason = podmanFailure(125, [line('stderr', text)])!
      assert.ok(reason.startsWith(text.slice('Error: '.length).trim()), reason)
      assert.match(reason, /--pull never/)
      assert.match(reason, /gpunet localnet start --runtime host` \(no isolation\)\)$/)
    }
    // Another failure of podman's, or the command's own 127, gets no such hint.
    assert.equal(
      podmanFailure(125, [line('stderr', 'Error: crun: setns: permission denied\n')]),
      'crun: setns: permission denied',
    )
    assert.equal(podmanFailure(127, [line('stderr', 'Error: image not known\n')]), 'image not known')
  })
})

describe('node/results: results rules and restarts', () => {
  it('extracts every match and its groups from the named streams, as the network nodes do', () => {
    const logs = [line('stdout', 'score=42\n'), line('stderr', 'score=7\n'), line('stdout', 'nothing\n')]
    const found = extractResults(logs, {
      all: {regex: 'score=(\\d+)'},
      err: {regex: 'score=\\d+', logType: ['stderr']},
      star: {regex: '*'},
      bad: {regex: '('},
      optional: {regex: 'score=(x)?'},
    })
    // A regex that does not compile gives its error, as text.
    assert.match(String(found.bad), /^SyntaxError: Invalid regular expression/)
    assert.deepEqual(
      {...found, bad: null},
      {
        all: ['score=42', '42', 'score=7', '7'],
        err: ['score=7'],
        // `*` is the regex `/*`: an empty match at the start of each line.
        star: ['', '', ''],
        bad: null,
        optional: ['score=', '', 'score=', ''],
      },
    )
  })

  it('keeps every run of a restarted operation in one state: its lines in order, the last exit code', () => {
    const first = result(7, {logs: [line('stdout', 'one\n')], stdout: 'one\n', startedAt: at})
    const last = result(0, {
      logs: [line('stdout', 'two\n')],
      stdout: 'two\n',
      startedAt: '2026-11-25T10:00:05.000Z',
      endedAt: '2026-11-25T10:00:06.000Z',
    })
    const merged = mergeRuns([first, last])
    assert.deepEqual(
      {...merged, logs: merged.logs.map((l) => l.log)},
      {...last, startedAt: at, logs: ['one\n', 'two\n'], stdout: 'one\ntwo\n', stderr: ''},
    )
    const builder = new ResultBuilder('job', 'node')
    builder.add(merged, {acceptStop: false, group: 'g', restarts: [{exitCode: 7, endTime: Date.parse(at)}]})
    const state = builder.build().opStates[0]!
    assert.equal(state.group, 'g')
    assert.deepEqual(state.gpunet.restarts, [{exitCode: 7, endTime: Date.parse(at)}])
  })
})
