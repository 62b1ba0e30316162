import {strict as assert} from 'node:assert'

import {mkdtempSync, readdirSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {
  MAX_OUT_OPERATIONS,
  operationFileName,
  resultFiles,
  writeResultFiles,
} from '../../../src/lib/results/result-files.js'
import {resultView} from '../../../src/lib/results/result-view.js'

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
      [...resultFiles(view, {}).files.keys()],
      ['result.json', 'a_b.stdout.log', 'a_b-2.stdout.log', 'result-2.stdout.log'],
    )
  })

  /** A flow state whose operations have these ids and, each, lines of these streams ('log': none said). */
  const flow = (ops: [string, ('stdout' | 'stderr' | 'log')[]][]) =>
    resultView({
      status: 'success',
      startTime: 0,
      endTime: 0,
      opStates: ops.map(([operationId, streams]) => ({
        operationId,
        status: 'success',
        exitCode: 0,
        logs: streams.map((type) => ({type, log: `${operationId} ${type}\n`, timestamp: 't'})),
      })),
    })

  it('never gives two operations the same file: `x` and `x.stdout` both have lines of an unnamed stream', () => {
    // The flow state's `log` type has no stream of its own: those lines go to <op>.log.
    const view = flow([
      ['x', ['stdout']],
      ['x.stdout', ['log']],
      ['X.STDOUT', ['log']],
    ])
    assert.ok(view)
    const {files, manifest} = resultFiles(view, {})
    const names = [...files.keys()]
    assert.equal(new Set(names.map((n) => n.toLowerCase())).size, names.length, names.join(', '))
    assert.deepEqual(
      manifest.operations.map((op) => [op.id, Object.values(op.files)]),
      [
        ['x', ['x.stdout.log']],
        ['x.stdout', ['x.stdout-2.log']],
        ['X.STDOUT', ['X.STDOUT-3.log']],
      ],
    )
  })

  it('writes files for at most MAX_OUT_OPERATIONS operations, and a manifest mapping each id to its files', () => {
    const ops: [string, 'stdout'[]][] = Array.from({length: 20_000}, (_, i) => [`op${i}`, ['stdout']])
    const view = flow(ops)
    const dir = mkdtempSync(join(tmpdir(), 'gpunet-out-'))
    try {
      const bytes = new TextEncoder().encode('{"as": "stored"}')
      const written = writeResultFiles(dir, view, {as: 'stored'}, {bytes})
      assert.equal(written.omittedOperations, 20_000 - MAX_OUT_OPERATIONS)
      assert.equal(readdirSync(dir).length, MAX_OUT_OPERATIONS + 2)
      assert.equal(readFileSync(join(dir, 'result.json'), 'utf8'), '{"as": "stored"}', 'the bytes as stored')
      const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
        operations: {id: string; files: Record<string, string>}[]
        omittedOperations: number
      }
      assert.equal(manifest.operations.length, MAX_OUT_OPERATIONS)
      assert.deepEqual(manifest.operations[7], {id: 'op7', files: {stdout: 'op7.stdout.log'}})
      assert.equal(readFileSync(join(dir, 'op7.stdout.log'), 'utf8'), 'op7 stdout\n')
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
