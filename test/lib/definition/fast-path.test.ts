import {strict as assert} from 'node:assert'
import {readFile} from 'node:fs/promises'
import {inspect, isDeepStrictEqual} from 'node:util'

import fc from 'fast-check'
import {array, httpUrl, number, object, string, url} from 'zod'

import {assertTranslatable, generateFastPathSource} from '../../../src/lib/definition/fast-path/generate.js'
import {jobDefinitionJsonSchema} from '../../../src/lib/definition/json-schema.js'
import {type ValidationResult, validateJobDefinition, validateWithZod} from '../../../src/lib/definition/validate.js'
import {listTemplates} from '../../../src/lib/definition/templates.js'
import {everyMemberDefinition} from '../../helpers/definitions.js'

const GENERATED = new URL('../../../src/lib/definition/fast-path/generated.ts', import.meta.url)
/** Fixed, so a failure names a case that reproduces; fast-check prints the seed and the shrunk case. */
const SEED = 20_240_917
// Under StrykerJS a tenth: this test covers most of the validator's mutants, and each of them runs it.
const RUNS = '__stryker__' in globalThis ? 2_000 : 20_000

type Container = Record<string, unknown> | unknown[]
interface Slot {
  parent: Container
  key: string | number
}

/** True when the fast path decided: its result is the input itself, while zod always returns a copy. */
function tookFastPath(value: unknown, result: ValidationResult): boolean {
  return result.success && result.data === value
}

/** Every member and element of a JSON value, depth first. */
function slotsOf(value: unknown, out: Slot[] = []): Slot[] {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push({parent: value, key: i})
      slotsOf(item, out)
    })
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      out.push({parent: value as Record<string, unknown>, key})
      slotsOf(item, out)
    }
  }
  return out
}

/** Sets a member as JSON.parse does: an own property even for `__proto__`, so no prototype changes. */
function define(parent: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(parent, key, {value, enumerable: true, writable: true, configurable: true})
}

function namesIn(schema: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) namesIn(item, out)
  else if (schema !== null && typeof schema === 'object') {
    for (const [key, sub] of Object.entries(schema)) {
      if (key === 'properties') for (const name of Object.keys(sub as object)) out.add(name)
      namesIn(sub, out)
    }
  }
  return out
}

const known = [...namesIn(jobDefinitionJsonSchema())]
/** Member names: the schema's own, near misses of them, and names that are special to JavaScript objects. */
const NAMES = [
  ...known,
  ...known.map((n) => n.toUpperCase()),
  ...known.map((n) => n.slice(1)),
  '__proto__',
  'constructor',
  'toString',
  '',
  'x',
  'MY-KEY/x',
]

/** Values at the edges of what each member takes: other members' enum values, odd URIs, odd numbers. */
const EDGE_VALUES: unknown[] = [
  ...['', ' ', '0.1', '0.2', 'container', 'container/run', 'container/create-volume', 'S3', 'HF', 's3'],
  ...['api', 'api-listen', 'web', 'webapi', 'websocket', 'none', 'http', 'GET', 'get', 'PATCH', 'cli', 'run'],
  ...['https://example.com/x', ' https://example.com', 'https://exa\tmple.com', 'https://example.com/\n'],
  ...['http://', 'a:b', 'not a uri', 'mailto:x@y.z', 'file:///tmp', '//example.com', 'https://[::1', 'HTTP://X'],
  ...['\uFEFFhttps://x.io', 'https://x.io\u00A0', 'https://x\ry.io', '\u0000https://x.io', 'https://x.io/\u0000'],
  ...['%%secrets.TOKEN%%', 'x'.repeat(300)],
  ...[0, -0, 1, -1, 1.5, 8080, 65_535, 65_536, 1e308, -1e308, 2 ** 53 + 1, Number.NaN, Infinity, -Infinity],
  ...[true, false, null, undefined, [], {}, [''], ['a', 1], {A: 'x'}, {A: 1}, {port: 80}, {type: 'websocket'}],
]

/** The members zod checks with url(): a resource's `url` and a logistics `endpoint`. */
const URL_MEMBERS = new Set(['url', 'endpoint'])
/** What a URL member may be set to: the odd strings above (most of them URLs, or nearly), and any URL or text. */
const urlValueArb: fc.Arbitrary<unknown> = fc.oneof(
  {weight: 4, arbitrary: fc.constantFrom(...EDGE_VALUES.filter((v) => typeof v === 'string'))},
  {weight: 1, arbitrary: fc.webUrl({withQueryParameters: true, withFragments: true})},
  {weight: 1, arbitrary: fc.string()},
  {weight: 1, arbitrary: fc.constantFrom(...EDGE_VALUES.filter((v) => typeof v !== 'string'))},
)

const valueArb: fc.Arbitrary<unknown> = fc.oneof(
  {weight: 6, arbitrary: fc.constantFrom(...EDGE_VALUES)},
  {weight: 1, arbitrary: fc.jsonValue({maxDepth: 2})},
  {weight: 1, arbitrary: fc.string()},
  {weight: 1, arbitrary: fc.double()},
)

type Mutation =
  | {kind: 'drop'; at: number}
  | {kind: 'duplicate'; at: number}
  | {kind: 'rename'; at: number; name: string}
  | {kind: 'retype'; at: number; value: unknown}
  | {kind: 'add'; at: number; name: string; value: unknown}
  | {kind: 'move'; at: number; from: number}
  | {kind: 'url'; at: number; value: unknown}

const at = fc.nat()
const name = fc.constantFrom(...NAMES)
const memberMutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({kind: fc.constant('drop' as const), at}),
  fc.record({kind: fc.constant('duplicate' as const), at}),
  fc.record({kind: fc.constant('rename' as const), at, name}),
  fc.record({kind: fc.constant('retype' as const), at, value: valueArb}),
  fc.record({kind: fc.constant('add' as const), at, name, value: valueArb}),
  fc.record({kind: fc.constant('move' as const), at, from: at}),
)
// URL members are 2 of about 80 slots, in some templates only: aimed at on purpose, in one mutation out of five.
const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  {weight: 4, arbitrary: memberMutationArb},
  {weight: 1, arbitrary: fc.record({kind: fc.constant('url' as const), at, value: urlValueArb})},
)

/**
 * Applies one mutation to the slot it picks (indices wrap around the document's slots); true when it changed a
 * URL member (a `url` mutation on a document that has one).
 */
function mutate(doc: Record<string, unknown>, m: Mutation): boolean {
  const slots = slotsOf(doc)
  if (slots.length === 0) return false
  if (m.kind === 'url') {
    const urls = slots.filter((s) => !Array.isArray(s.parent) && URL_MEMBERS.has(s.key as string))
    if (urls.length === 0) return false
    const {parent, key} = urls[m.at % urls.length] as Slot
    define(parent as Record<string, unknown>, key as string, structuredClone(m.value))
    return true
  }
  const slot = slots[m.at % slots.length] as Slot
  const {parent, key} = slot
  const current = (parent as Record<string | number, unknown>)[key]
  const containers = [doc, ...slots.map((s) => (s.parent as Record<string | number, unknown>)[s.key])].filter(
    (v): v is Container => v !== null && typeof v === 'object',
  )
  if (m.kind === 'drop') {
    if (Array.isArray(parent)) parent.splice(key as number, 1)
    else delete parent[key as string]
  } else if (m.kind === 'duplicate') {
    // A copy of an element next to it: for ops, a duplicate id.
    if (Array.isArray(parent)) parent.push(structuredClone(current))
    else define(parent, `${String(key)}_copy`, structuredClone(current))
  } else if (m.kind === 'rename') {
    if (Array.isArray(parent)) return false
    delete parent[key as string]
    define(parent, m.name, current)
  } else if (m.kind === 'retype') {
    // Copies: fast-check hands the same value to later cases, and a value inserted twice could nest in itself.
    if (Array.isArray(parent)) parent[key as number] = structuredClone(m.value)
    else define(parent, key as string, structuredClone(m.value))
  } else if (m.kind === 'add') {
    const target = containers[m.at % containers.length] as Container
    if (Array.isArray(target)) target.push(structuredClone(m.value))
    else define(target, m.name, structuredClone(m.value))
  } else {
    const from = slots[m.from % slots.length] as Slot
    const moved = structuredClone((from.parent as Record<string | number, unknown>)[from.key])
    if (Array.isArray(parent)) parent[key as number] = moved
    else define(parent, key as string, moved)
  }
  return false
}

describe('validator fast path (generated from the zod schema)', () => {
  let templates: Record<string, unknown>[]
  before(async () => {
    templates = [everyMemberDefinition()]
    for (const t of await listTemplates()) templates.push(JSON.parse(await readFile(t.file, 'utf8')))
  })

  it('is current with the zod schema', async () => {
    const onDisk = await readFile(GENERATED, 'utf8')
    assert.ok(onDisk === generateFastPathSource(), `${GENERATED.pathname} is stale: run \`npm run build\``)
  })

  it('decides every template itself', () => {
    for (const value of templates) assert.ok(tookFastPath(value, validateJobDefinition(value)))
  })

  it(`agrees with zod on ${RUNS} mutated templates: verdict, errors, and when zod would change the value`, () => {
    let fast = 0
    let valid = 0
    let urlCases = 0
    fc.assert(
      fc.property(fc.nat(), fc.array(mutationArb, {minLength: 1, maxLength: 4}), (pick, mutations) => {
        const doc = structuredClone(templates[pick % templates.length]) as Record<string, unknown>
        let urlChanged = false
        for (const m of mutations) urlChanged = mutate(doc, m) || urlChanged
        if (urlChanged) urlCases++
        const ours = validateJobDefinition(doc)
        const zod = validateWithZod(doc)
        assert.equal(ours.success, zod.success, 'verdict')
        // Paths, pointers, codes and messages are zod's own, unchanged.
        assert.deepStrictEqual(ours.errors, zod.errors)
        // The fast path decides exactly the values zod accepts without rewriting them; the rest go to zod.
        const unchanged = zod.success && isDeepStrictEqual(zod.data, doc)
        assert.equal(tookFastPath(doc, ours), unchanged, 'fast path taken exactly when zod keeps the value as is')
        if (!tookFastPath(doc, ours)) assert.deepStrictEqual(ours, zod)
        if (unchanged) fast++
        if (zod.success) valid++
      }),
      {seed: SEED, numRuns: RUNS},
    )
    // Both verdicts must be common, or the property says little.
    assert.ok(valid > RUNS * 0.1 && valid < RUNS * 0.9, `${valid} of ${RUNS} cases valid`)
    assert.ok(fast > valid * 0.9, `fast path decided ${fast} of ${valid} valid cases`)
    assert.ok(urlCases > RUNS * 0.1, `${urlCases} of ${RUNS} cases changed a URL member`)
  })

  it('agrees with zod on values JSON cannot hold', () => {
    const ok = () => ({version: '0.1', type: 'container', ops: [{id: 'a', type: 'container/run', args: {image: 'x'}}]})
    const withArgs = (args: Record<string, unknown>) => {
      const doc = ok()
      Object.assign(doc.ops[0]!.args, args)
      return doc
    }
    class Env {
      A = 'x'
    }
    const cases: unknown[] = [
      withArgs({env: {A: 'x', [Symbol('s')]: 'y'}}),
      withArgs({env: new Env()}),
      withArgs({env: new Date(0)}),
      withArgs({env: Object.assign(Object.create(null), {A: 'x'})}),
      withArgs({env: Object.create({A: 1})}),
      withArgs({env: {constructor: 'x', A: 'y'}}),
      withArgs({env: Object.assign(Object.create(Array.prototype), {A: 'x'})}),
      withArgs({env: Object.assign(Object.create({constructor: Array}), {A: 'x'})}),
      withArgs({env: Object.assign(Object.create({constructor: () => 0}), {A: 'x'})}),
      withArgs({expose: Number.NaN}),
      withArgs({expose: Infinity}),
      withArgs({cmd: ['a', , 'b']}), // eslint-disable-line no-sparse-arrays
      withArgs({gpu: undefined, cmd: undefined}),
      withArgs({required_vram: 10n}),
      Object.assign(Object.create({extra: 1}), ok()),
      Object.assign(Object.create({version: '0.1'}), {type: 'container', ops: ok().ops}),
      {...ok(), [Symbol('s')]: 1},
      {...ok(), meta: new Map()},
      undefined,
      () => 0,
    ]
    for (const value of cases) {
      const ours = validateJobDefinition(value)
      const zod = validateWithZod(value)
      assert.equal(ours.success, zod.success, inspect(value))
      assert.deepStrictEqual(ours.errors, zod.errors)
    }
  })

  it('decides every odd URL as zod’s url() does, in a resource and in logistics', () => {
    const strings = EDGE_VALUES.filter((v): v is string => typeof v === 'string')
    for (const url of [...strings, 'https://x.io\u2028', '\u3000https://x.io', 'https://x.io/\t/', 'ht\ntp://x.io']) {
      const docs = [
        {version: '0.1', type: 'container', ops: [{id: 'a', type: 'container/run', args: {image: 'x'}}]},
        {version: '0.1', type: 'container', logistics: {send: {type: 'api', args: {endpoint: url}}}, ops: []},
      ]
      docs[0]!.ops[0]!.args = {image: 'x', resources: [{type: 'S3', target: '/d', url}]} as never
      for (const doc of docs) {
        const ours = validateJobDefinition(doc)
        const zod = validateWithZod(doc)
        assert.equal(ours.success, zod.success, JSON.stringify(url))
        assert.deepStrictEqual(ours.errors, zod.errors)
        const unchanged = zod.success && isDeepStrictEqual(zod.data, doc)
        assert.equal(tookFastPath(doc, ours), unchanged, `fast path for ${JSON.stringify(url)}`)
      }
    }
  })

  it('leaves to zod the URLs and members zod rewrites, so `data` is zod’s', () => {
    const doc = JSON.parse(
      '{"version":"0.1","type":"container","meta":{"__proto__":1},"ops":[{"id":"a","type":"container/run",' +
        '"args":{"image":"x","env":{"__proto__":"x"},"resources":[{"type":"S3","target":"/d","url":" https://s3.example.com\\t"}]}}]}',
    )
    const result = validateJobDefinition(doc)
    assert.ok(result.success && !tookFastPath(doc, result))
    assert.equal(result.data.ops[0]?.args.resources?.[0]?.url, 'https://s3.example.com')
    assert.deepEqual(Object.keys(result.data.meta ?? {}), [])
  })

  it('refuses, at build time, zod rules its JSON Schema would drop', () => {
    for (const schema of [
      string().refine((s) => s.length > 1),
      string().min(2),
      string().default('x'),
      string().transform((s) => s.trim()),
      object({ports: array(number().int())}),
      string().email(),
      url({normalize: true}),
      url({hostname: /^example\.com$/}),
      httpUrl(),
    ]) {
      assert.throws(() => assertTranslatable(schema), /fast path: .* (check|format|zod ")/)
    }
  })
})
