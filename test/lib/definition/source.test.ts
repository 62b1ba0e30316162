import {strict as assert} from 'node:assert'

import {checkDefinitionText} from '../../../src/lib/definition/check.js'
import {detectFormat, parseSource} from '../../../src/lib/definition/source.js'

const JSON_TEXT = `{
  "version": "0.1",
  "type": "container",
  "ops": [
    {
      "id": "a",
      "type": "container/run",
      "args": {
        "imgae": "ubuntu",
        "gpu": "yes"
      }
    }
  ]
}
`

const YAML_TEXT = `version: "0.1"
type: container
ops:
  - id: a
    type: container/run
    args:
      imgae: ubuntu
      gpu: "yes"
`

describe('definition sources', () => {
  it('detects the format from the name, then from the text', async () => {
    assert.equal(detectFormat('a.yaml', '{}'), 'yaml')
    assert.equal(detectFormat('a.YML', '{}'), 'yaml')
    assert.equal(detectFormat('a.json', 'x: 1'), 'json')
    assert.equal(detectFormat('<stdin>', '  {"a":1}'), 'json')
    assert.equal(detectFormat('<stdin>', 'a: 1'), 'yaml')
  })

  for (const [format, text, file] of [
    ['JSON', JSON_TEXT, 'job.json'],
    ['YAML', YAML_TEXT, 'job.yaml'],
  ] as const) {
    it(`pins ${format} problems to the line and column of the member`, async () => {
      const {report} = await checkDefinitionText(text, file)
      assert.equal(report.valid, false)
      const byCode = Object.fromEntries(report.errors.map((e) => [e.code, e]))
      const unknown = byCode.unknown_field
      const missing = byCode.missing_field
      const type = byCode.invalid_type
      assert.ok(unknown && missing && type, JSON.stringify(report.errors))
      // unknown member: its name; missing member: the object that lacks it; a bad value: the value.
      const lines = text.split('\n')
      assert.equal(
        lines[unknown.line - 1]
          ?.slice(unknown.column - 1)
          .replace(/^"/, '')
          .startsWith('imgae'),
        true,
      )
      assert.match(lines[missing.line - 1] ?? '', /args/)
      assert.equal(lines[type.line - 1]?.slice(type.column - 1).startsWith('"yes"'), true)
    })
  }

  it('reports JSON syntax errors with line and column', async () => {
    const outcome = await parseSource('{\n  "version": "0.1",\n  "ops": [1,]\n}', 'json')
    assert.equal(outcome.ok, false)
    if (outcome.ok) return
    assert.deepEqual(outcome.problem, {
      code: 'syntax_error',
      message: 'invalid JSON: a trailing comma is not allowed in JSON',
      line: 3,
      column: 13,
    })
  })

  it('explains a missing comma and comments in JSON', async () => {
    const comma = await parseSource('{"a": 1\n "b": 2}', 'json')
    assert.equal(!comma.ok && comma.problem.message, 'invalid JSON: expected `,` between members or items')
    assert.equal(!comma.ok && comma.problem.line, 2)
    const comment = await parseSource('{\n// note\n"a": 1}', 'json')
    assert.equal(!comment.ok && comment.problem.message, 'invalid JSON: comments are not allowed in JSON')
  })

  it('reports YAML syntax errors and duplicate keys with line and column', async () => {
    const bad = await parseSource('version: "0.1"\nops: [a, b\n', 'yaml')
    assert.equal(bad.ok, false)
    assert.match(!bad.ok ? bad.problem.message : '', /^invalid YAML: /)
    const dup = await parseSource('a: 1\na: 2\n', 'yaml')
    assert.equal(!dup.ok && dup.problem.line, 2)
  })

  it('refuses an empty file and accepts a byte order mark', async () => {
    const empty = await parseSource('  \n', 'json')
    assert.equal(!empty.ok && empty.problem.message, 'the file is empty')
    const bom = await parseSource('\uFEFF{"a": 1}', 'json')
    assert.deepEqual(bom.ok && bom.source.value, {a: 1})
  })

  it('does not expand YAML alias bombs', async () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for (let i = 1; i < 12; i++)
      bomb.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      )
    const outcome = await parseSource(bomb.join('\n'), 'yaml')
    assert.equal(outcome.ok, false)
  })
})
