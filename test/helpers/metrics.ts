/** Reading a Prometheus scrape in tests. */
import {strict as assert} from 'node:assert'

/** Prometheus text as `name{labels}` -> value, every sample line; a line that is not one fails the test. */
export function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (-?[0-9.e+]+|NaN)$/.exec(line)
    assert.ok(match, `not a sample line: ${line}`)
    samples.set(match[1]!, Number(match[2]))
  }
  return samples
}
