/**
 * The folder rules of ARCHITECTURE.md over the import graph of src/: dependencies between folders point one
 * way (no cycles), node/ reaches a chain only through its interface, and market/ and secrets/ never reach the
 * localnet (network-connection.ts, above them, does).
 */
import {strict as assert} from 'node:assert'
import {readdirSync, readFileSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'

import ts from 'typescript'

const SRC = resolve(import.meta.dirname, '..', 'src')

/** Every .ts file under src/, relative to it. */
function sources(dir = SRC): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') ? [relative(SRC, path)] : []
  })
}

/**
 * The unit a file belongs to: a folder of src/lib (its subfolders included) or of src/commands; a file directly
 * in src/ or src/lib is a unit of its own (those are shared leaves such as errors.ts, or entry points).
 */
function unitOf(file: string): string {
  const parts = file.split('/')
  if (parts[0] === 'lib' && parts.length > 2) return `lib/${parts[1]}`
  if (parts[0] === 'commands' && parts.length > 2) return `commands/${parts[1]}`
  return file.replace(/\.ts$/, '')
}

/** file → files it imports (relative imports only; `import type` included, they are dependencies too). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sources()) {
    const info = ts.preProcessFile(readFileSync(join(SRC, file), 'utf8'), true, true)
    const targets = info.importedFiles
      .map((f) => f.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => relative(SRC, resolve(SRC, dirname(file), name)).replace(/\.js$/, '.ts'))
    graph.set(file, targets)
  }
  return graph
}

/** unit → units it imports, each with one example import. */
function unitGraph(): Map<string, Map<string, string>> {
  const units = new Map<string, Map<string, string>>()
  for (const [file, targets] of importGraph()) {
    const from = unitOf(file)
    const edges = units.get(from) ?? new Map<string, string>()
    units.set(from, edges)
    for (const target of targets) {
      const to = unitOf(target)
      if (to !== from && !edges.has(to)) edges.set(to, `${file} -> ${target}`)
    }
  }
  return units
}

/** A cycle of units, as their names in order, or null. */
function findCycle(graph: Map<string, Map<string, string>>): string[] | null {
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (unit: string): string[] | null => {
    if (state.get(unit) === 'done') return null
    if (state.get(unit) === 'open') return [...stack.slice(stack.indexOf(unit)), unit]
    state.set(unit, 'open')
    stack.push(unit)
    for (const next of graph.get(unit)?.keys() ?? []) {
      const cycle = visit(next)
      if (cycle) return cycle
    }
    stack.pop()
    state.set(unit, 'done')
    return null
  }
  for (const unit of graph.keys()) {
    const cycle = visit(unit)
    if (cycle) return cycle
  }
  return null
}

describe('source structure', () => {
  const graph = unitGraph()

  it('has no import cycle between folders', () => {
    const cycle = findCycle(graph)
    const explain = cycle
      ?.slice(1)
      .map((to, i) => graph.get(cycle[i]!)!.get(to))
      .join('\n  ')
    assert.equal(cycle, null, `folders import each other in a cycle: ${cycle?.join(' -> ')}\n  ${explain}`)
  })

  // Type-only imports count: a circle of types still ties the files together, and hides where a type belongs.
  it('has no import cycle between files either', () => {
    const files = new Map<string, Map<string, string>>()
    for (const [file, targets] of importGraph()) {
      files.set(file, new Map(targets.filter((to) => to !== file).map((to) => [to, `${file} -> ${to}`])))
    }
    const cycle = findCycle(files)
    assert.equal(cycle, null, `files import each other in a cycle: ${cycle?.join(' -> ')}`)
  })

  const forbidden: [string, string, string][] = [
    ['lib/node', 'lib/localnet', 'node/ talks to a chain through its NodeNetwork interface'],
    ['lib/market', 'lib/localnet', 'network-connection.ts resolves the localnet for market/'],
    ['lib/secrets', 'lib/localnet', 'network-connection.ts resolves the localnet for secrets/'],
    ['lib/market', 'lib/node', 'shared result types live in flow-state.ts'],
    ['lib/market', 'lib/secrets', 'market/ and secrets/ are siblings'],
  ]
  for (const [from, to, why] of forbidden) {
    it(`${from}/ imports nothing from ${to}/ (${why})`, () => {
      assert.equal(graph.get(from)?.get(to), undefined)
    })
  }

  it("lib/ imports nothing from the commands nor from the CLI's plumbing (cli/)", () => {
    for (const [unit, edges] of graph) {
      if (!unit.startsWith('lib')) continue
      for (const [to, example] of edges) assert.ok(!to.startsWith('commands') && !to.startsWith('cli'), example)
    }
  })

  // src/ shows the layers at a glance: the library's entry, the CLI's plumbing, the commands, the library.
  it('src/ holds index.ts and the folders cli/, commands/ and lib/ only', () => {
    assert.deepEqual(readdirSync(SRC).sort(), ['cli', 'commands', 'index.ts', 'lib'])
  })

  // A file loose in lib/ is shared by most of its folders; anything else lives in the folder of what it serves.
  it('lib/ keeps loose only the files every layer shares', () => {
    const loose = readdirSync(join(SRC, 'lib')).filter((name) => name.endsWith('.ts'))
    assert.deepEqual(loose.sort(), [
      'errors.ts',
      'manager-connection.ts',
      'network-connection.ts',
      'network.ts',
      'package-root.ts',
    ])
  })

  // In Node 20 an ed25519 JWK export now and then deadlocks the main thread (issue 22): keys go through DER.
  it('exports and imports no key as JWK', () => {
    const files = sources()
    assert.ok(files.includes('lib/keys/ed25519.ts'))
    for (const file of files) {
      const text = readFileSync(join(SRC, file), 'utf8')
      assert.doesNotMatch(text, /format:\s*['"]jwk['"]/, `${file} converts a key through JWK`)
    }
  })

  it('finds the imports it checks (the graph is not empty)', () => {
    assert.ok(graph.get('lib/localnet')?.has('lib/market'))
    assert.ok(graph.get('lib/network-connection')?.has('lib/localnet'))
  })
})
