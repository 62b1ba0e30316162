/**
 * The folder rules of ARCHITECTURE.md over the import graph of src/: dependencies between folders point one
 * way (no cycles), and so do those between the rooms of a folder; node/ reaches a chain only through its interface,
 * and market/ and secrets/ never reach the localnet (network-connection.ts, above them, does); no folder holds more
 * than MAX_LOOSE_FILES files of its own.
 */
import {strict as assert} from 'node:assert'
import {readdirSync, readFileSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'

import ts from 'typescript'

const SRC = resolve(import.meta.dirname, '..', 'src')
/** Past this many files loose in one folder, a new file has no obvious place: the folder wants rooms. */
const MAX_LOOSE_FILES = 20

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

/**
 * The room a file of a folder of src/lib belongs to: the subfolder it is in (`lib/deployments/store`), or null for
 * a file loose in the folder, which is the folder's own level (its entry points and what its rooms share).
 */
function roomOf(file: string): string | null {
  const parts = file.split('/')
  return parts[0] === 'lib' && parts.length > 3 ? parts.slice(0, 3).join('/') : null
}

/** unit → units it imports, each with one example import; `of` names a file's unit, null leaving it out. */
function unitGraph(of: (file: string) => string | null = unitOf): Map<string, Map<string, string>> {
  const units = new Map<string, Map<string, string>>()
  for (const [file, targets] of importGraph()) {
    const from = of(file)
    if (from === null) continue
    const edges = units.get(from) ?? new Map<string, string>()
    units.set(from, edges)
    for (const target of targets) {
      const to = of(target)
      if (to !== null && to !== from && !edges.has(to)) edges.set(to, `${file} -> ${target}`)
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

  // Rooms of one folder (deployments' api, store, paying, ...) stack too: a room that imports a room importing it back
  // is no room. What two rooms share lives loose in their folder (deployments/context.ts, types.ts).
  it('has no import cycle between the rooms of a folder', () => {
    const rooms = unitGraph(roomOf)
    const cycle = findCycle(rooms)
    const explain = cycle
      ?.slice(1)
      .map((to, i) => rooms.get(cycle[i]!)!.get(to))
      .join('\n  ')
    assert.equal(cycle, null, `rooms import each other in a cycle: ${cycle?.join(' -> ')}\n  ${explain}`)
  })

  it(`keeps at most ${MAX_LOOSE_FILES} files loose in any folder`, () => {
    const loose = new Map<string, number>()
    for (const file of sources()) loose.set(dirname(file), (loose.get(dirname(file)) ?? 0) + 1)
    const crowded = [...loose].filter(([, count]) => count > MAX_LOOSE_FILES).map(([dir, n]) => `src/${dir}: ${n}`)
    assert.deepEqual(crowded, [])
  })

  // docs/development.md draws the wings in this order; every import points down it, so the picture stays true.
  const WINGS = [
    'mcp',
    'job',
    'network-connection',
    'manager-connection',
    'localnet',
    'credits',
    'deployments',
    'gateway',
    'node',
    'secrets',
    'market',
    'node-api',
    'settings',
    'results',
    'definition',
    'ipfs',
    'keys',
    'terminal',
    'http',
    'text',
    'process',
    'sqlite',
    'errors',
    'network',
    'package-root',
  ]
  it('has every wing of lib/ import only wings drawn below it in docs/development.md', () => {
    const rank = (unit: string) => WINGS.indexOf(unit.replace(/^lib\//, ''))
    const upward: string[] = []
    for (const [unit, edges] of graph) {
      if (!unit.startsWith('lib/')) continue
      assert.notEqual(rank(unit), -1, `${unit} is not drawn: give it its place in WINGS and in the picture`)
      for (const [to, example] of edges) if (to.startsWith('lib/') && rank(to) <= rank(unit)) upward.push(example)
    }
    assert.deepEqual(upward, [])
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
    ['lib/node', 'lib/gateway', 'a node names what it asks of a gateway (JobPorts in node/job-run.ts)'],
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
    assert.ok(unitGraph(roomOf).get('lib/deployments/api')?.has('lib/deployments/manager'))
  })
})
