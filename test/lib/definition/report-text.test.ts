import {strict as assert} from 'node:assert'

import type {FileCheck, LocatedIssue} from '../../../src/lib/definition/check.js'
import {fileCheckLines, type Paint} from '../../../src/lib/definition/report-text.js'

/** Paint that shows each style, so a test sees which part is painted how. */
const tags: Paint = (style, text) => `<${style}>${text}</${style}>`
const plain: Paint = (_style, text) => text

function issue(fields: Partial<LocatedIssue>): LocatedIssue {
  return {
    path: 'ops[0].args.image',
    pointer: '/ops/0/args/image',
    code: 'invalid_type',
    message: 'm',
    line: 0,
    column: 0,
    ...fields,
  }
}

function check(report: Partial<FileCheck['report']>, text?: string): FileCheck {
  return {report: {file: 'job.json', valid: true, errors: [], warnings: [], ...report}, text}
}

const TEXT = '{\n  "version": "0.1",\n  "ops": []\n}\n'

describe('the human report of a checked file (job validate)', () => {
  it('a valid file: one verdict line, with its warnings counted', () => {
    assert.deepEqual(fileCheckLines(check({}), true, tags), ['<green>✔</green> job.json is a valid job definition'])
    const warned = check({warnings: [issue({message: 'a tag should be pinned', line: 2, column: 3})]}, TEXT)
    assert.deepEqual(fileCheckLines(warned, true, tags), [
      '<dim>job.json:2:3</dim>  <cyan>ops[0].args.image</cyan>  <yellow>warning:</yellow> a tag should be pinned',
      '<green>✔</green> job.json is a valid job definition (1 warning)',
    ])
  })

  it('an error: where, path, message, hint and code frame, then the verdict with the count', () => {
    const failed = check(
      {valid: false, errors: [issue({message: 'expected a string', hint: 'quote it', line: 2, column: 14})]},
      TEXT,
    )
    assert.deepEqual(fileCheckLines(failed, true, tags), [
      '<dim>job.json:2:14</dim>  <cyan>ops[0].args.image</cyan>  expected a string',
      '    <dim>hint: quote it</dim>',
      ['      1 | {', '    > 2 |   "version": "0.1",', '        |              ^', '      3 |   "ops": []'].join('\n'),
      '<red>✖</red> job.json: 1 error',
    ])
    // Without frames, or without the text, or at no line: no frame.
    assert.equal(fileCheckLines(failed, false, plain).length, 3)
    assert.equal(fileCheckLines(check(failed.report), true, plain).length, 3)
    const nowhere = check({valid: false, errors: [issue({path: '', line: 0})]}, TEXT)
    assert.deepEqual(fileCheckLines(nowhere, true, plain), ['job.json  m', '✖ job.json: 1 error'])
  })

  it('counts errors and warnings in words, and says when only --strict made warnings fail', () => {
    const two = check({valid: false, errors: [issue({}), issue({})], warnings: [issue({}), issue({}), issue({})]})
    assert.equal(fileCheckLines(two, false, plain).at(-1), '✖ job.json: 2 errors, 3 warnings')
    const strict = check({valid: false, warnings: [issue({hint: 'pin it'})]})
    assert.deepEqual(fileCheckLines(strict, false, plain), [
      'job.json  ops[0].args.image  warning: m',
      '    hint: pin it',
      '✖ job.json: 1 warning (--strict treats warnings as errors)',
    ])
  })

  it("with a network: the form's changes, the checks passed, or the nodes' refusal", () => {
    const network = {
      name: 'devnet' as const,
      accepted: true,
      checks: [
        {by: 'the network validator 1.2', verdict: 'valid'},
        {by: 'gpunet', verdict: 'valid'},
      ],
      changes: [{path: 'ops[0].args.gpu', change: 'dropped (false is the default)'}],
    }
    assert.deepEqual(fileCheckLines(check({network}), false, tags), [
      "    <dim>in the network's form: ops[0].args.gpu dropped (false is the default)</dim>",
      "<green>✔</green> job.json devnet's nodes would run it (the network validator 1.2: valid; gpunet: valid)",
    ])
    const local = {...network, name: 'localnet' as const, changes: []}
    assert.equal(
      fileCheckLines(check({network: local}), false, plain).at(-1),
      "✔ job.json the localnet's node would run it (the network validator 1.2: valid; gpunet: valid)",
    )
    const refused = check({valid: false, errors: [issue({})], network: {...network, accepted: false, changes: []}})
    assert.equal(fileCheckLines(refused, false, plain).at(-1), "✖ job.json: devnet's nodes would refuse it: 1 error")
    const refusedWarned = check({
      valid: false,
      errors: [issue({}), issue({})],
      warnings: [issue({})],
      network: {...network, accepted: false, changes: []},
    })
    assert.equal(
      fileCheckLines(refusedWarned, false, plain).at(-1),
      "✖ job.json: devnet's nodes would refuse it: 2 errors, 1 warning",
    )
  })
})
