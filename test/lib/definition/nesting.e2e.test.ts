/**
 * The one nesting limit (src/lib/text/nesting.ts) shared by the CLI, the library and the services: a definition with
 * `meta` nested 3,000 deep overflowed the stack in `job validate`, lint, the secret-reference search and a job
 * login (issue 22 #6). Each now refuses it by name.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {checkDefinitionText} from '../../../src/lib/definition/check.js'
import {findSecretReferences, lintJobDefinition} from '../../../src/lib/definition/index.js'
import {jobDefinitionJsonSchema} from '../../../src/lib/definition/json-schema.js'
import {FREE_FORM_PLACES, passesCompiledCheck} from '../../../src/lib/definition/semantic.js'
import {validateJobDefinition, validateWithZod} from '../../../src/lib/definition/validate.js'
import {ExitCode, isGpunetError} from '../../../src/lib/errors.js'
import {MAX_NESTING_DEPTH, tooDeepAt} from '../../../src/lib/text/nesting.js'
import {runCli} from '../../helpers/cli.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {
  call,
  MemoryAuthority,
  newAddress,
  newWallet,
  signLogin,
  sqliteAdapter,
  startService,
} from '../../helpers/secrets.js'

/** `levels` arrays nested in one another around 1. */
function nested(levels: number): unknown {
  return JSON.parse(`${'['.repeat(levels)}1${']'.repeat(levels)}`)
}

/** A valid definition but for `meta`, which nests `levels` deep below meta.x. */
function deepDefinition(levels: number): Record<string, unknown> {
  return {
    version: '0.1',
    type: 'container',
    meta: {trigger: 'cli', x: nested(levels)},
    ops: [{type: 'container/run', id: 'run', args: {image: 'ubuntu', cmd: ['echo', '%%secrets.TOKEN%%']}}],
  }
}

describe('nesting depth limit', function () {
  this.timeout(60_000)

  it('measures depth with a walk that stops at the limit: the limit holds, one more is refused, 100,000 deep does not overflow', () => {
    assert.equal(tooDeepAt(nested(MAX_NESTING_DEPTH)), null)
    assert.deepEqual(tooDeepAt(nested(MAX_NESTING_DEPTH + 1)), Array(MAX_NESTING_DEPTH).fill(0))
    assert.notEqual(tooDeepAt(nested(100_000)), null)
  })

  it('keeps accepting a definition nested to the limit', () => {
    // The definition is depth 1, meta 2, the arrays in meta.x 3 and below.
    const definition = deepDefinition(MAX_NESTING_DEPTH - 2)
    assert.equal(validateJobDefinition(definition).success, true)
    assert.equal(validateJobDefinition(deepDefinition(MAX_NESTING_DEPTH - 1)).errors?.[0]?.code, 'too_deep')
    assert.deepEqual(findSecretReferences(definition), ['TOKEN'])
  })

  it('refuses a definition nested 3,000 deep in validation, lint and the secret-reference search', () => {
    const definition = deepDefinition(3000)
    for (const result of [validateJobDefinition(definition), validateWithZod(definition)]) {
      assert.equal(result.success, false)
      assert.equal(result.errors?.length, 1)
      assert.equal(result.errors?.[0]?.code, 'too_deep')
      assert.match(result.errors?.[0]?.path ?? '', /^meta\.x\[0\]/)
    }
    assert.deepEqual(
      lintJobDefinition(definition).map((issue) => issue.code),
      ['too_deep'],
    )
    assert.throws(
      () => findSecretReferences(definition),
      (error) =>
        isGpunetError(error) &&
        error.code === 'too_deep' &&
        error.exitCode === ExitCode.INVALID_INPUT &&
        error.message.includes(`more than ${MAX_NESTING_DEPTH} deep`),
    )
  })

  it('reports it from the text, located, without overflowing', async () => {
    const {report} = await checkDefinitionText(JSON.stringify(deepDefinition(3000)), 'deep.json')
    assert.equal(report.valid, false)
    assert.deepEqual(
      report.errors.map((e) => [e.code, e.line]),
      [['too_deep', 1]],
    )
  })

  it('gpunet job validate exits 3 with too_deep, not an unexpected failure', async function () {
    // It spawns the built CLI, which no mutant reaches and StrykerJS's sandbox does not hold.
    if ('__stryker__' in globalThis) this.skip()
    const dir = tempDir()
    try {
      const file = join(dir, 'deep.json')
      writeFileSync(file, JSON.stringify(deepDefinition(3000)))
      const result = await runCli(['job', 'validate', file, '--json'])
      assert.equal(result.code, ExitCode.INVALID_INPUT, result.stderr)
      assert.match(result.stdout, /"code": ?"too_deep"/)
      assert.doesNotMatch(result.stdout + result.stderr, /unexpected failure|Maximum call stack/)
    } finally {
      removeDir(dir)
    }
  })

  it('a job login for such a definition answers 422 too_deep, not 500', async () => {
    const authority = new MemoryAuthority()
    const s = await startService(sqliteAdapter, {authority})
    try {
      const node = newWallet()
      const job = newAddress()
      authority.run(job, {node: node.address, poster: newWallet().address, definition: deepDefinition(3000)})
      const answer = await call(s.url, 'POST', '/login', {params: signLogin(node, {job})})
      assert.equal(answer.status, 422, answer.text)
      assert.equal((answer.body as {error: {code: string}}).error.code, 'too_deep')
    } finally {
      await s.stop()
    }
  })

  /** The places of a JSON Schema that take a value of any shape, and the deepest array or object it shapes. */
  function schemaPlaces(schema: Record<string, unknown>): {free: {path: string; depth: number}[]; deepest: number} {
    const free: {path: string; depth: number}[] = []
    let deepest = 0
    const visit = (node: Record<string, unknown>, path: string, depth: number) => {
      const alternatives = [node.anyOf, node.oneOf, node.allOf].filter(Array.isArray).flat() as Record<
        string,
        unknown
      >[]
      for (const alternative of alternatives) visit(alternative, path, depth)
      const types = ([] as unknown[]).concat(node.type ?? [])
      const shaped = alternatives.length > 0 || types.length > 0 || 'const' in node || 'enum' in node
      if (!shaped) return void free.push({path, depth})
      if (types.includes('object')) {
        deepest = Math.max(deepest, depth)
        const properties = (node.properties ?? {}) as Record<string, Record<string, unknown>>
        for (const [name, sub] of Object.entries(properties)) visit(sub, path ? `${path}.${name}` : name, depth + 1)
        const extra = node.additionalProperties
        // A member of any name and any shape: the object itself is measured.
        if (
          extra === undefined ||
          extra === true ||
          (typeof extra === 'object' && Object.keys(extra as object).length === 0)
        )
          free.push({path, depth})
        else if (typeof extra === 'object' && extra !== null)
          visit(extra as Record<string, unknown>, `${path}.*`, depth + 1)
      }
      if (types.includes('array')) {
        deepest = Math.max(deepest, depth)
        visit((node.items ?? {}) as Record<string, unknown>, `${path}[]`, depth + 1)
      }
    }
    visit(schema, '', 1)
    return {free, deepest}
  }

  it("measures, on the fast path, every place the schema leaves free, and the schema's own depth is far below the limit", () => {
    const {free, deepest} = schemaPlaces(jobDefinitionJsonSchema())
    assert.deepEqual(
      free,
      FREE_FORM_PLACES.map(({path, depth}) => ({path, depth})),
    )
    assert.ok(deepest <= 9 && deepest < MAX_NESTING_DEPTH, String(deepest))
  })

  it('the fast path refuses a free-form member one past the limit and takes it at the limit, as the full measure does', () => {
    const withBody = (levels: number) => ({
      version: '0.1',
      type: 'container',
      ops: [
        {
          id: 'web',
          type: 'container/run',
          args: {
            image: 'nginx',
            expose: [
              {
                port: 80,
                health_checks: [{type: 'http', path: '/', method: 'POST', expected_status: 200, body: nested(levels)}],
              },
            ],
          },
        },
      ],
    })
    // The body is at depth 9: its own arrays may nest MAX - 8 deep.
    for (const [make, atLimit] of [
      [deepDefinition, MAX_NESTING_DEPTH - 2],
      [withBody, MAX_NESTING_DEPTH - 8],
    ] as const) {
      assert.equal(tooDeepAt(make(atLimit)), null)
      assert.equal(passesCompiledCheck(make(atLimit)), true)
      assert.equal(validateJobDefinition(make(atLimit)).success, true)
      assert.notEqual(tooDeepAt(make(atLimit + 1)), null)
      assert.equal(passesCompiledCheck(make(atLimit + 1)), false)
      assert.equal(validateJobDefinition(make(atLimit + 1)).errors?.[0]?.code, 'too_deep')
      assert.equal(validateJobDefinition(make(5000)).errors?.[0]?.code, 'too_deep')
    }
  })

  it('finds the path only for a value refused, the first one in member order, and takes no limit past 1024', () => {
    assert.deepEqual(tooDeepAt({a: 1, b: [{c: nested(3)}], d: nested(9)}, 4), ['b', 0, 'c', 0])
    assert.deepEqual(tooDeepAt([[1], [[[2]]]], 3), [1, 0, 0])
    assert.equal(tooDeepAt({a: {b: {}}}, 3), null)
    assert.deepEqual(tooDeepAt({}, 0), [])
    assert.throws(() => tooDeepAt({}, 1025), RangeError)
  })
})
