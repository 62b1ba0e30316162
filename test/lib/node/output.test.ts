import {strict as assert} from 'node:assert'

import {OutputCollector} from '../../../src/lib/node/output.js'

function collect(chunks: string[], limit: number, redact: Record<string, string> = {}) {
  const collector = new OutputCollector(limit, redact)
  for (const chunk of chunks) collector.push(Buffer.from(chunk))
  return collector.result()
}

describe('OutputCollector', () => {
  it('keeps output under the limit whole', () => {
    assert.deepEqual(collect(['hello ', 'world'], 100), {text: 'hello world', cutBytes: 0})
    assert.deepEqual(collect(['0123456789'], 10), {text: '0123456789', cutBytes: 0})
    assert.deepEqual(collect([], 10), {text: '', cutBytes: 0})
  })

  it('keeps the first and last half of longer output and says how much was cut', () => {
    const text = Array.from({length: 100}, (_, i) => String(i % 10)).join('')
    const chunks = text.match(/.{1,7}/g) as string[]
    const result = collect(chunks, 20)
    assert.equal(result.cutBytes, 80)
    assert.equal(result.text, '0123456789\n[... 80 bytes cut ...]\n0123456789')
  })

  const secret = 'TOPSECRET'
  const cases: [string, string[], number, string][] = [
    ['a value in one chunk', ['a TOPSECRET b'], 100, 'a %%secrets.S%% b'],
    ['a value split over chunks', ['a TOPS', 'ECR', 'ET b'], 100, 'a %%secrets.S%% b'],
    ['a value twice', ['TOPSECRETTOPSECRET'], 100, '%%secrets.S%%%%secrets.S%%'],
    [
      'a value across the head cut',
      ['0123TOPSECRET', '-'.repeat(50), 'end'],
      10,
      '0123%%secrets.S%%\n[... 56 bytes cut ...]\n--end',
    ],
    [
      'a value across the tail cut',
      ['-'.repeat(50), 'TOPSECRET123'],
      10,
      '-----\n[... 52 bytes cut ...]\n%%secrets.S%%123',
    ],
  ]
  for (const [name, chunks, limit, expected] of cases) {
    it(`masks ${name}`, () => assert.equal(collect(chunks, limit, {S: secret}).text, expected))
  }

  it('masks the longer of two values that start together', () => {
    assert.equal(collect(['x=abcdef'], 100, {SHORT: 'abc', LONG: 'abcdef'}).text, 'x=%%secrets.LONG%%')
  })

  it('ignores empty values', () => {
    assert.equal(collect(['plain'], 100, {E: ''}).text, 'plain')
  })
})
