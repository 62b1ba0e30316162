/**
 * The test layers of docs/development.md, decided by a file's name: `*.e2e.test.ts` (the built CLI, localnets,
 * podman, PostgreSQL), `*.chaos.test.ts` (the long fault suites) and every other `*.test.ts`, the unit layer, which
 * starts no process, no localnet, no podman and no PostgreSQL. A unit file that imports what starts one, itself
 * or through a helper, is refused here; `test/support/unit-layer.ts` refuses a process started at run time.
 */
import {strict as assert} from 'node:assert'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'

import ts from 'typescript'

const ROOT = resolve(import.meta.dirname, '..')
const TEST = join(ROOT, 'test')

/** What only the end-to-end layers may import, with why. */
const STARTS: [RegExp, string][] = [
  [/^(node:)?child_process$/, 'starts processes'],
  [/^pg$/, 'connects to PostgreSQL'],
  [/^src\/lib\/localnet\/server\.ts$/, 'starts a localnet'],
  [/^src\/lib\/secrets\/service\/postgres\.ts$/, 'opens a PostgreSQL store'],
  [/^src\/lib\/deployments\/pg-(store|schema)\.ts$/, 'opens a PostgreSQL store'],
  [/^src\/lib\/node\/runtime\/podman-api\.ts$/, "starts podman's API service"],
]

/** The layer a test file's name puts it in. */
function layerOf(file: string): 'unit' | 'e2e' | 'chaos' {
  if (file.endsWith('.e2e.test.ts')) return 'e2e'
  if (file.endsWith('.chaos.test.ts')) return 'chaos'
  return 'unit'
}

function testFiles(dir = TEST): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return testFiles(path)
    return entry.name.endsWith('.test.ts') ? [relative(ROOT, path)] : []
  })
}

/** A module's imports: project files relative to the root (`.ts`), packages and built-ins as written. */
function importsOf(file: string): string[] {
  // A type-only import loads nothing at run time.
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/^import type [^;]*?from\s*'[^']+'/gm, '')
  const info = ts.preProcessFile(text, true, true)
  return info.importedFiles.map(({fileName}) => {
    if (!fileName.startsWith('.')) return fileName
    return relative(ROOT, resolve(ROOT, dirname(file), fileName)).replace(/\.js$/, '.ts')
  })
}

/**
 * The first chain of imports from `file` through test/ modules (helpers, shared suites) that reaches something
 * only the end-to-end layers may use, with the reason; null when there is none. src/ modules are checked where
 * they are imported, not followed: a src module that could start something only does when a test calls it.
 */
function startingChain(file: string, seen = new Set<string>()): {chain: string[]; why: string} | null {
  seen.add(file)
  for (const target of importsOf(file)) {
    const hit = STARTS.find(([pattern]) => pattern.test(target))
    if (hit) return {chain: [file, target], why: hit[1]}
    if (target.startsWith('test/') && !seen.has(target) && existsSync(join(ROOT, target))) {
      const found = startingChain(target, seen)
      if (found) return {chain: [file, ...found.chain], why: found.why}
    }
  }
  return null
}

describe('test layers', () => {
  const files = testFiles()

  it('finds the test files of every layer', () => {
    const counts = {unit: 0, e2e: 0, chaos: 0}
    for (const file of files) counts[layerOf(file)]++
    assert.ok(counts.unit > 50 && counts.e2e > 50 && counts.chaos > 0, JSON.stringify(counts))
  })

  it('a unit test file imports nothing that starts a process, a localnet, podman or PostgreSQL', () => {
    const refused = files
      .filter((file) => layerOf(file) === 'unit')
      .flatMap((file) => {
        const found = startingChain(file)
        return found ? [`${found.chain.join(' -> ')} (${found.why}): name it *.e2e.test.ts`] : []
      })
    assert.deepEqual(refused, [])
  })

  it('sees a helper that starts a process through the helpers it imports', () => {
    const found = startingChain('test/helpers/cli-localnet.ts')
    assert.deepEqual(found?.chain.slice(0, 2), ['test/helpers/cli-localnet.ts', 'node:child_process'])
    assert.equal(startingChain('test/helpers/eventually.ts'), null)
  })
})
