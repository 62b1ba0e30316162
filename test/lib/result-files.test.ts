import {strict as assert} from 'node:assert'

import {operationFileName, resultFiles} from '../../src/lib/result-files.js'
import {resultView} from '../../src/lib/result-view.js'

describe('result files (job get --out)', () => {
  it('makes file names that stay in the folder, whatever the operation id', () => {
    for (const [id, name] of [
      ['train', 'train'],
      ['../x', '__x'],
      ['a/b\\c', 'a_b_c'],
      ['..', 'op-3_'],
      ['', 'op-3'],
      ['.hidden', '_hidden'],
      ['a b:c', 'a_b_c'],
    ]) {
      const made = operationFileName(id!, 2)
      assert.equal(made, name, id)
      assert.doesNotMatch(made, /[/\\]|^\./)
    }
  })

  it('keeps two ids that sanitize alike apart, and never takes result.json', () => {
    const view = resultView({
      status: 'success',
      startTime: 0,
      endTime: 0,
      opStates: ['a/b', 'a_b', 'result'].map((operationId) => ({
        operationId,
        status: 'success',
        exitCode: 0,
        logs: [{type: 'stdout', log: `${operationId}\n`, timestamp: 't'}],
      })),
    })
    assert.deepEqual(
      [...resultFiles(view, {}).keys()],
      ['result.json', 'a_b.stdout.log', 'a_b-2.stdout.log', 'result-2.stdout.log'],
    )
  })
})
