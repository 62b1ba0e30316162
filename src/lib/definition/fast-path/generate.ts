// Build time only (`npm run build` writes ./generated.ts; the library never imports this module): turns the
// zod schema, through the JSON Schema generated from it, into a standalone ajv validator. zod stays the one
// source of the rules; ajv only compiles them into straight-line code ahead of time.
import {_, Ajv, type KeywordCxt} from 'ajv'
import standaloneCode from 'ajv/dist/standalone/index.js'
import type {z} from 'zod'

import {jobDefinitionJsonSchema} from '../json-schema.js'
import {jobDefinitionSchema} from '../schema.js'

/** The name the generated module exports its validator under. */
export const FAST_PATH_EXPORT = 'matchesJobDefinitionSchema'

type JsonSchema = Record<string, unknown>

/** zod types whose JSON Schema ajv checks exactly as zod does (with the keywords below for the rest). */
const FAITHFUL_TYPES = new Set(['object', 'array', 'union', 'record', 'optional', 'literal', 'enum', 'string'])
const PLAIN_TYPES = new Set(['number', 'boolean', 'any', 'unknown'])
/** JSON Schema keywords the fast path understands; anything else stops the build rather than be ignored. */
const RULE_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  'oneOf',
  'const',
  'enum',
  'minItems',
  'format',
  'propertyNames',
])
const ANNOTATIONS = new Set(['$schema', '$id', 'title', 'description'])

/**
 * Refuses a zod schema that uses what its JSON Schema would not carry (refinements, transforms, defaults,
 * string lengths that ajv counts in code points and zod in UTF-16 units), so such a rule can never be
 * silently missing from the fast path. Supporting one means translating it here and in zod-rules.ts.
 */
export function assertTranslatable(schema: z.core.$ZodType, path = ''): void {
  const where = path || '(root)'
  const def = schema._zod.def as unknown as Record<string, unknown> & {type: string}
  const checks = (def.checks as {_zod: {def: {check: string}}}[] | undefined) ?? []
  for (const check of checks) {
    const kind = check._zod.def.check
    if (!(def.type === 'array' && kind === 'min_length')) {
      throw new Error(`fast path: ${where} has a "${kind}" check the generator does not translate`)
    }
  }
  if (def.type === 'string' && def.format !== undefined && def.format !== 'url') {
    throw new Error(`fast path: ${where} has string format "${String(def.format)}" the generator does not translate`)
  }
  if (def.format === 'url' && ['normalize', 'hostname', 'protocol'].some((option) => option in def)) {
    throw new Error(`fast path: ${where} has a url() format with options, which zod-rules.ts does not follow`)
  }
  if (PLAIN_TYPES.has(def.type)) return
  if (!FAITHFUL_TYPES.has(def.type)) {
    throw new Error(`fast path: ${where} is a zod "${def.type}", which the generator does not translate`)
  }
  const children: [string, unknown][] = [
    ...Object.entries((def.shape as Record<string, unknown> | undefined) ?? {}).map(([k, s]): [string, unknown] => [
      `${path}.${k}`,
      s,
    ]),
    ...((def.options as unknown[] | undefined) ?? []).map((s, i): [string, unknown] => [`${path}|${i}`, s]),
    [`${path}[]`, def.element],
    [`${path}.*`, def.valueType],
    [path, def.innerType],
  ]
  if (def.catchall && (def.catchall as z.core.$ZodType)._zod.def.type !== 'never') children.push([path, def.catchall])
  for (const [childPath, child] of children) if (child) assertTranslatable(child as z.core.$ZodType, childPath)
}

/**
 * The JSON Schema as the fast path compiles it: annotations dropped, and zod's container rules that JSON
 * Schema cannot say marked with the two keywords `generateFastPathSource` defines (zodRecord, zodLooseObject).
 */
export function fastPathSchema(node: unknown, where = '#'): unknown {
  if (Array.isArray(node)) return node.map((item, i) => fastPathSchema(item, `${where}/${i}`))
  if (node === null || typeof node !== 'object') return node
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(node as JsonSchema)) {
    if (key === 'properties') {
      out.properties = Object.fromEntries(
        Object.entries(value as JsonSchema).map(([name, sub]) => [name, fastPathSchema(sub, `${where}/${name}`)]),
      )
      continue
    }
    if (ANNOTATIONS.has(key)) continue
    if (!RULE_KEYWORDS.has(key)) throw new Error(`fast path: keyword "${key}" at ${where} is not translated`)
    out[key] = fastPathSchema(value, `${where}/${key}`)
  }
  if (out.type !== 'object') return out
  if (out.propertyNames !== undefined) {
    if (JSON.stringify(out.propertyNames) !== '{"type":"string"}') {
      throw new Error(`fast path: a record at ${where} has keys other than strings`)
    }
    delete out.propertyNames
    out.zodRecord = true
  } else if (out.additionalProperties !== false) {
    out.zodLooseObject = true
  }
  return out
}

/**
 * Drops the error objects ajv's code builds: zod words every failure, so nothing reads them, and without them
 * the code is half the size (less to parse when `gpunet job validate` starts). The code still counts errors,
 * which is all its `anyOf` and `oneOf` branches look at.
 */
export function withoutErrorDetails(code: string): string {
  const out = code
    .replace(/^validate\d+\.errors = \[\{.*\}\];$\n/gm, '')
    .replace(/^const (err\d+) = \{.*\};$/gm, 'const $1 = null;')
  if (out.includes('instancePath:')) throw new Error('fast path: ajv output has error objects in an unexpected form')
  return out
}

/** Compiles the schema and returns the generated module's TypeScript text. */
export function generateFastPathSource(): string {
  assertTranslatable(jobDefinitionSchema)
  const ajv = new Ajv({
    allErrors: false,
    strict: true,
    strictNumbers: true, // zod's number() refuses NaN and Infinity
    allowUnionTypes: true,
    messages: false,
    code: {source: true, esm: true, lines: true, formats: _`fastPathFormats`},
  })
  ajv.addFormat('uri', () => true) // replaced at run time by fastPathFormats.uri (zod's URL rule)
  ajv.addKeyword({
    keyword: 'zodRecord',
    type: 'object',
    schemaType: 'boolean',
    code: (cxt: KeywordCxt) => cxt.fail(_`!isPlainRecord(${cxt.data})`),
  })
  ajv.addKeyword({
    keyword: 'zodLooseObject',
    type: 'object',
    schemaType: 'boolean',
    code: (cxt: KeywordCxt) => cxt.fail(_`!hasNoProtoMember(${cxt.data})`),
  })
  // The published schema's 2020-12 features are not used, and draft-07 code skips 2020-12's evaluation tracking.
  ajv.addSchema(fastPathSchema(jobDefinitionJsonSchema()) as JsonSchema, 'job')
  const code = (standaloneCode as unknown as (a: Ajv, refs: Record<string, string>) => string)(ajv, {
    [FAST_PATH_EXPORT]: 'job',
  })
  const header = new RegExp(`^"use strict";\\nexport const ${FAST_PATH_EXPORT} = (validate\\d+);\\n`)
  const match = header.exec(code)
  if (!match) throw new Error('fast path: ajv standalone output has an unexpected header')
  const body = withoutErrorDetails(code.slice(match[0].length))
  if (/\brequire\(/.test(body)) throw new Error('fast path: the generated code needs an ajv runtime module')
  return [
    '// @ts-nocheck',
    '// Generated by scripts/generate-fast-path.js from src/lib/definition/schema.ts (zod -> JSON Schema -> ajv',
    '// standalone code). Do not edit: `npm run build` writes it again.',
    "import {fastPathFormats, hasNoProtoMember, isPlainRecord} from './zod-rules.js'",
    body.trimEnd(),
    '',
    '/** True when `value` satisfies every rule of the zod schema (the semantic pass aside), checked by compiled code. */',
    `export const ${FAST_PATH_EXPORT}: (value: unknown) => boolean = ${match[1]}`,
    '',
  ].join('\n')
}
