import {closest, distance} from 'fastest-levenshtein'
import type {z} from 'zod'

import {type DefinitionIssue, makeIssue, memberName} from './issue.js'
import {isObject, type PathSegment, valueAt} from './paths.js'

type ZodIssue = z.core.$ZodIssue
type AnySchema = z.core.$ZodType

const EXPECTED: Record<string, string> = {
  array: 'an array',
  boolean: 'a boolean (true or false)',
  number: 'a number',
  object: 'an object',
  record: 'an object',
  string: 'a string',
}

/** Friendly names for the spec's unions, keyed by the member that holds them. */
const UNION_EXPECTED: Record<string, string> = {
  cmd: 'a string or an array of strings',
  entrypoint: 'a string or an array of strings',
  expose: 'a port number or an array of exposed ports',
  system_resources: 'a string or a number',
}

/** Describes a received value briefly, for "got ..." in messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return value.length > 40 ? `a string ("${value.slice(0, 37)}...")` : `"${value}"`
  if (typeof value === 'object') return 'an object'
  if (typeof value === 'boolean' || typeof value === 'number') return `${typeof value} ${String(value)}`
  return typeof value
}

/** "must be one of ...", with the closest allowed word when the value looks like a typo of one. */
function oneOf(name: string, allowed: string[], value: unknown): string {
  const suggestion = typeof value === 'string' ? suggest(value, allowed) : undefined
  const tail = suggestion ? `; did you mean \`${suggestion}\`?` : `, got ${describeValue(value)}`
  return `${name} must be one of ${allowed.join(', ')}${tail}`
}

/** Converts zod's issues into gpunet's: every violation, each with a place, a code and a plain message. */
export function convertZodIssues(issues: readonly ZodIssue[], input: unknown, schema: AnySchema): DefinitionIssue[] {
  const out: DefinitionIssue[] = []
  for (const issue of issues) convertOne(issue, [], input, schema, out)
  return out
}

function convertOne(
  issue: ZodIssue,
  prefix: PathSegment[],
  input: unknown,
  schema: AnySchema,
  out: DefinitionIssue[],
): void {
  // A symbol key (only from a caller's object, never from JSON) is named as `Symbol(name)`.
  const path = [...prefix, ...issue.path.map((s) => (typeof s === 'symbol' ? s.toString() : s))]
  const value = valueAt(input, path)
  const parent = path.length > 0 ? valueAt(input, path.slice(0, -1)) : undefined
  const key = path.at(-1)
  const isMissing = value === undefined && isObject(parent) && typeof key === 'string' && !(key in parent)
  const name = memberName(path)

  if (isMissing && issue.code !== 'unrecognized_keys') {
    out.push(makeIssue(path, 'missing_field', `missing required field \`${String(key)}\``))
    return
  }

  switch (issue.code) {
    case 'invalid_type': {
      if (path.length === 0) {
        out.push(
          makeIssue(path, 'not_an_object', `a job definition must be a JSON object, got ${describeValue(value)}`),
        )
        return
      }
      const expected = EXPECTED[issue.expected] ?? issue.expected
      out.push(makeIssue(path, 'invalid_type', `${name} must be ${expected}, got ${describeValue(value)}`))
      return
    }

    case 'invalid_value': {
      const allowed = issue.values.map(String)
      if (allowed.length === 1) {
        const constant = JSON.stringify(issue.values[0])
        const typeNote = typeof value !== typeof issue.values[0] ? ` (a ${typeof issue.values[0]})` : ''
        out.push(
          makeIssue(path, 'invalid_value', `${name} must be ${constant}${typeNote}, got ${describeValue(value)}`),
        )
        return
      }
      out.push(makeIssue(path, 'invalid_value', oneOf(name, allowed, value)))
      return
    }

    case 'invalid_union': {
      if ('note' in issue && issue.note === 'No matching discriminator') {
        const options = ((issue as {options?: unknown[]}).options ?? []).map(String)
        out.push(makeIssue(path, 'invalid_value', oneOf(name, options, value)))
        return
      }
      // A branch whose every issue lies below the union matched the value's kind: its issues are the real ones.
      const deep = issue.errors
        .filter((branch) => branch.length > 0 && branch.every((i) => i.path.length > 0))
        .sort((a, b) => a.length - b.length)[0]
      if (deep) {
        for (const inner of deep) convertOne(inner, path, input, schema, out)
        return
      }
      // A system resource's name is the author's (it may be `cmd`): its place in the schema names the union.
      const member =
        path.at(-2) === 'system_resources' ? 'system_resources' : typeof key === 'string' ? key : String(path.at(-2))
      const expected =
        UNION_EXPECTED[member] ??
        [
          ...new Set(
            issue.errors.flat().map((i) => (i.code === 'invalid_type' ? (EXPECTED[i.expected] ?? i.expected) : '')),
          ),
        ]
          .filter(Boolean)
          .join(' or ')
      out.push(makeIssue(path, 'invalid_type', `${name} must be ${expected}, got ${describeValue(value)}`))
      return
    }

    case 'invalid_format': {
      out.push(
        makeIssue(
          path,
          'invalid_uri',
          `${name} must be an absolute URI such as https://example.com/path, got ${describeValue(value)}`,
        ),
      )
      return
    }

    case 'too_small': {
      const noun = key === 'ops' ? 'operation' : 'item'
      const minimum = Number(issue.minimum)
      out.push(
        makeIssue(path, 'too_few_items', `${name} must have at least ${minimum} ${noun}${minimum === 1 ? '' : 's'}`),
      )
      return
    }

    case 'unrecognized_keys': {
      const allowed = allowedKeysAt(schema, input, path)
      for (const unknownKey of issue.keys) {
        const suggestion = suggest(unknownKey, allowed)
        const tail = suggestion
          ? `; did you mean \`${suggestion}\`?`
          : allowed.length > 0
            ? `; allowed fields are ${allowed.map((k) => `\`${k}\``).join(', ')}`
            : ''
        out.push(makeIssue([...path, unknownKey], 'unknown_field', `unknown field \`${unknownKey}\`${tail}`))
      }
      return
    }

    default: {
      out.push(makeIssue(path, 'invalid', `${name}: ${issue.message}`))
    }
  }
}

/** The closest allowed word, when it is close enough to be a plausible typo. */
export function suggest(word: string, candidates: readonly string[]): string | undefined {
  if (candidates.length === 0) return undefined
  const lower = word.toLowerCase()
  const exact = candidates.find((c) => c.toLowerCase() === lower)
  if (exact) return exact
  const best = closest(word, [...candidates])
  // Two edits (a swapped pair of letters) in a five-letter word is still a typo; further off is a different word.
  const limit = Math.max(1, Math.round(Math.max(word.length, best.length) * 0.4))
  return distance(lower, best.toLowerCase()) <= limit ? best : undefined
}

interface Def {
  type: string
  shape?: Record<string, AnySchema>
  innerType?: AnySchema
  element?: AnySchema
  options?: AnySchema[]
  valueType?: AnySchema
  values?: unknown[]
}

function defOf(schema: AnySchema): Def {
  return (schema as unknown as {_zod: {def: Def}})._zod.def
}

/** Strips optional/default wrappers and picks the union member that fits `value`. */
function resolve(schema: AnySchema, value: unknown): Def | undefined {
  let def = defOf(schema)
  while ((def.type === 'optional' || def.type === 'default' || def.type === 'nullable') && def.innerType) {
    def = defOf(def.innerType)
  }
  if (def.type !== 'union') return def
  for (const option of def.options ?? []) {
    const candidate = resolve(option, value)
    if (candidate && fits(candidate, value)) return candidate
  }
  return undefined
}

function fits(def: Def, value: unknown): boolean {
  if (def.type === 'array') return Array.isArray(value)
  if (def.type !== 'object') return !isObject(value) && !Array.isArray(value)
  if (!isObject(value)) return false
  // A discriminated member fits only when its literal members match the value's.
  return Object.entries(def.shape ?? {}).every(([k, s]) => {
    const inner = defOf(s)
    return inner.type !== 'literal' || inner.values?.includes(value[k]) === true
  })
}

/** The member names the schema allows for the object at `path`, for "did you mean" suggestions. */
function allowedKeysAt(schema: AnySchema, input: unknown, path: readonly PathSegment[]): string[] {
  let value = input
  let def = resolve(schema, value)
  for (const segment of path) {
    if (!def) return []
    value = valueAt(value, [segment])
    let next: AnySchema | undefined
    if (def.type === 'object') next = def.shape?.[segment as string]
    else if (def.type === 'array') next = def.element
    else if (def.type === 'record') next = def.valueType
    def = next ? resolve(next, value) : undefined
  }
  return def?.type === 'object' ? Object.keys(def.shape ?? {}).filter((k) => k !== '$schema') : []
}
