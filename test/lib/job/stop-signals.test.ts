/** Following a job stops on Ctrl+C, SIGTERM and SIGHUP alike, each with its own exit code (issue 25). */
import {strict as assert} from 'node:assert'

import {interruptible, stopExitCode} from '../../../src/lib/job/stop-signals.js'

describe('job/stop-signals', () => {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    it(`${signal} aborts the follow with its name as the reason: exit ${code}`, async () => {
      const before = process.listenerCount(signal)
      const reason = await interruptible(
        (abort) =>
          new Promise((resolve) => {
            abort.addEventListener('abort', () => resolve(abort.reason))
            process.emit(signal as NodeJS.Signals, signal as NodeJS.Signals)
          }),
      )
      assert.equal(reason, signal)
      assert.equal(stopExitCode(AbortSignal.abort(signal)), code)
      assert.equal(process.listenerCount(signal), before, 'the default behaviour comes back')
    })
  }

  it('gives up its handlers when the follow fails, and counts an abort of unknown reason as Ctrl+C', async () => {
    const before = ['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => process.listenerCount(s))
    await assert.rejects(
      interruptible(async () => {
        throw new Error('boom')
      }),
      /boom/,
    )
    assert.deepEqual(
      ['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => process.listenerCount(s)),
      before,
    )
    assert.equal(stopExitCode(AbortSignal.abort()), 130)
    assert.equal(stopExitCode(undefined), 130)
  })
})
