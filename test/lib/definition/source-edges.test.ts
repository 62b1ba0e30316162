import {strict as assert} from 'node:assert'

import {
  detectFormat,
  type Locate,
  parseSource,
  positionOf,
  type SourceFormat,
} from '../../../src/lib/definition/source.js'

async function problemOf(text: string, format: SourceFormat) {
  const outcome = await parseSource(text, format)
  assert.equal(outcome.ok, false, `${JSON.stringify(text)} parsed`)
  return outcome.ok ? undefined : outcome.problem
}

async function locatorOf(text: string, format: SourceFormat): Promise<Locate> {
  const outcome = await parseSource(text, format)
  assert.ok(outcome.ok, JSON.stringify(outcome))
  return outcome.source.locator()
}

describe('definition sources: format detection', () => {
  it('goes by the last extension of the name, whatever the text', () => {
    assert.equal(detectFormat('job.yaml.json', 'a: 1'), 'json')
    assert.equal(detectFormat('job.json.yaml', '{"a": 1}'), 'yaml')
    assert.equal(detectFormat('job.json.txt', 'a: 1'), 'yaml')
    assert.equal(detectFormat('job.yml.txt', '{"a": 1}'), 'json')
  })

  it('without a known extension, takes text that starts with { or [ for JSON, and nothing else', () => {
    assert.equal(detectFormat('-', '\n\t[1]'), 'json')
    assert.equal(detectFormat('-', 'a: [1]'), 'yaml')
    assert.equal(detectFormat('-', 'a: {b: 1}'), 'yaml')
  })
})

describe('definition sources: positions', () => {
  it('puts an offset at the start of a line on that line, column 1', () => {
    const starts = [0, 5, 9]
    assert.deepEqual(positionOf(starts, 0), {line: 1, column: 1})
    assert.deepEqual(positionOf(starts, 4), {line: 1, column: 5})
    assert.deepEqual(positionOf(starts, 5), {line: 2, column: 1})
    assert.deepEqual(positionOf(starts, 8), {line: 2, column: 4})
    assert.deepEqual(positionOf(starts, 9), {line: 3, column: 1})
    assert.deepEqual(positionOf(starts, 20), {line: 3, column: 12})
  })
})

describe('definition sources: JSON syntax errors in words', () => {
  const cases: [string, string, number, number][] = [
    ['{"a": 1', 'expected `}`', 1, 8],
    ['[1', 'expected `]`', 1, 3],
    ['{"a" 1}', 'expected `:` after the member name', 1, 6],
    ['{} {}', 'unexpected text after the end of the document', 1, 4],
    ['{"a": "x\u0001"}', 'invalid character', 1, 7],
    ['{"a": "\\q"}', 'invalid escape sequence in a string', 1, 7],
    ['{"a": nope}', 'unexpected symbol', 1, 7],
    ['{"a": "\\u12"}', 'invalid unicode escape', 1, 7],
    ['{1: 2}', 'expected a member name in double quotes', 1, 2],
    ['{"a": 1.}', 'unterminated number', 1, 7],
    ['{"a": "x', 'unterminated string', 1, 7],
    ['{"a": }', 'expected a value', 1, 7],
  ]
  for (const [text, words, line, column] of cases) {
    it(`says "${words}" for ${JSON.stringify(text)}`, async () => {
      assert.deepEqual(await problemOf(text, 'json'), {
        code: 'syntax_error',
        message: `invalid JSON: ${words}`,
        line,
        column,
      })
    })
  }

  it('calls a comma only trailing when a ] or } follows it, blank lines and all', async () => {
    assert.deepEqual(await problemOf('{"a": [1,\n  ]}', 'json'), {
      code: 'syntax_error',
      message: 'invalid JSON: a trailing comma is not allowed in JSON',
      line: 2,
      column: 3,
    })
    // A comma earlier on, with the value missing: not a trailing comma.
    assert.equal((await problemOf('{"a": 1, "b": }', 'json'))?.message, 'invalid JSON: expected a value')
    // A comma right before, but something other than a closing bracket after it.
    assert.equal((await problemOf('[1, x]', 'json'))?.message, 'invalid JSON: unexpected symbol')
  })
})

describe('definition sources: YAML errors', () => {
  it('gives the parser message alone, without a code frame of its own', async () => {
    assert.deepEqual(await problemOf('a: 1\na: 2\n', 'yaml'), {
      code: 'syntax_error',
      message: 'invalid YAML: Map keys must be unique',
      line: 2,
      column: 1,
    })
  })

  it('keeps only the first line of a message that spans lines', async () => {
    assert.deepEqual(await problemOf('!!omap\n- "a\\nb": 1\n- "a\\nb": 2\n', 'yaml'), {
      code: 'syntax_error',
      message: 'invalid YAML: Ordered maps must not include duplicate keys: a',
      line: 1,
      column: 1,
    })
  })

  it('says why an alias bomb is refused', async () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]']
    for (let i = 1; i < 6; i++) {
      const name = String.fromCharCode(97 + i)
      const previous = String.fromCharCode(96 + i)
      lines.push(`${name}: &${name} [${Array(10).fill(`*${previous}`).join(', ')}]`)
    }
    assert.deepEqual(await problemOf(lines.join('\n'), 'yaml'), {
      code: 'syntax_error',
      message: 'invalid YAML: Excessive alias count indicates a resource exhaustion attack',
      line: 1,
      column: 1,
    })
  })
})

describe('definition sources: locating members', () => {
  const JSON_TEXT = ['{', '  "ops": [', '    {', '      "args": {"image": 1, "env": ["A"]}', '    }', '  ]', '}'].join(
    '\n',
  )

  it('points a missing JSON member at the name of the object that lacks it', async () => {
    const locate = await locatorOf(JSON_TEXT, 'json')
    assert.deepEqual(locate('/ops/0/args/cmd', 'parent'), {line: 4, column: 7})
    assert.deepEqual(locate('/ops/0/args', 'key'), {line: 4, column: 7})
    assert.deepEqual(locate('/ops/0/args', 'value'), {line: 4, column: 15})
    assert.deepEqual(locate('/ops/0/args/image', 'value'), {line: 4, column: 25})
    assert.deepEqual(locate('/ops/0/args/env/0', 'value'), {line: 4, column: 36})
    // Stepping into a number finds nothing further: the number itself.
    assert.deepEqual(locate('/ops/0/args/image/x', 'value'), {line: 4, column: 25})
  })
})
