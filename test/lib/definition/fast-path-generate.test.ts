import {strict as assert} from 'node:assert'

import {array, httpUrl, number, object, record, string, url, z} from 'zod'

import {
  assertTranslatable,
  fastPathSchema,
  generateFastPathSource,
  withoutErrorDetails,
} from '../../../src/lib/definition/fast-path/generate.js'

/** The build-time generator alone: which zod rules it refuses, and the JSON Schema and code it hands on. */
describe('fast path generator (build time)', () => {
  it('names the place and the rule of every zod rule it cannot translate', () => {
    const refused: [z.core.$ZodType, string][] = [
      [string().refine((s) => s.length > 1), '(root) has a "custom" check the generator does not translate'],
      [object({a: string().min(2)}), '.a has a "min_length" check the generator does not translate'],
      [array(string()).max(3), '(root) has a "max_length" check the generator does not translate'],
      [object({ports: array(number().int())}), '.ports[] has a "number_format" check the generator does not translate'],
      [
        object({a: object({b: string().default('x')})}),
        '.a.b is a zod "default", which the generator does not translate',
      ],
      [string().transform((s) => s.trim()), '(root) is a zod "pipe", which the generator does not translate'],
      [object({u: url({normalize: true})}), '.u has a url() format with options, which zod-rules.ts does not follow'],
      [url({hostname: /^example\.com$/}), '(root) has a url() format with options, which zod-rules.ts does not follow'],
      [httpUrl(), '(root) has a url() format with options, which zod-rules.ts does not follow'],
      [url({protocol: /^https$/}), '(root) has a url() format with options, which zod-rules.ts does not follow'],
      [z.email(), '(root) has string format "email" the generator does not translate'],
      [object({id: z.uuid()}), '.id has string format "uuid" the generator does not translate'],
      [object({u: z.union([string(), z.bigint()])}), '.u|1 is a zod "bigint", which the generator does not translate'],
      [record(string(), z.date()), '.* is a zod "date", which the generator does not translate'],
      [object({}).catchall(z.date()), '(root) is a zod "date", which the generator does not translate'],
      [array(z.date()), '[] is a zod "date", which the generator does not translate'],
      [object({o: z.date().optional()}), '.o is a zod "date", which the generator does not translate'],
      [z.tuple([string()]), '(root) is a zod "tuple", which the generator does not translate'],
    ]
    for (const [schema, message] of refused)
      assert.throws(() => assertTranslatable(schema), {message: `fast path: ${message}`})
  })

  it('takes what JSON Schema carries as zod checks it', () => {
    for (const schema of [
      array(string()).min(1),
      object({o: string().optional(), n: number(), b: z.boolean(), any: z.unknown()}),
      z.looseObject({a: string()}),
      z.strictObject({a: z.literal('x'), e: z.enum(['a', 'b'])}),
      url(),
      record(string(), z.union([string(), number()])),
    ]) {
      assert.doesNotThrow(() => assertTranslatable(schema))
    }
  })

  it('hands ajv the rules without annotations, and marks what JSON Schema cannot say', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'job',
      title: 'job',
      type: 'object',
      description: 'a job',
      properties: {
        // A member may be named like an annotation: only annotations are dropped, not members.
        title: {type: 'string', description: 'its title'},
        env: {type: 'object', propertyNames: {type: 'string'}, additionalProperties: {type: 'string'}},
        meta: {type: 'object', additionalProperties: {}},
        ops: {type: 'array', minItems: 1, items: {anyOf: [{type: 'string', format: 'uri'}, {const: 1}]}},
      },
      required: ['ops'],
      additionalProperties: false,
    }
    assert.deepEqual(fastPathSchema(schema), {
      type: 'object',
      properties: {
        title: {type: 'string'},
        env: {type: 'object', additionalProperties: {type: 'string'}, zodRecord: true},
        meta: {type: 'object', additionalProperties: {}, zodLooseObject: true},
        ops: {type: 'array', minItems: 1, items: {anyOf: [{type: 'string', format: 'uri'}, {const: 1}]}},
      },
      required: ['ops'],
      additionalProperties: false,
    })
    assert.deepEqual(fastPathSchema({type: 'object', properties: {}}), {
      type: 'object',
      properties: {},
      zodLooseObject: true,
    })
    assert.deepEqual(fastPathSchema({enum: ['a', null, 1]}), {enum: ['a', null, 1]})
  })

  it('stops at a keyword it does not translate, or a record whose keys are not plain strings, saying where', () => {
    assert.throws(() => fastPathSchema({type: 'object', properties: {a: {type: 'string', maxLength: 3}}}), {
      message: 'fast path: keyword "maxLength" at #/a is not translated',
    })
    assert.throws(() => fastPathSchema({type: 'array', items: {anyOf: [{type: 'number', minimum: 0}]}}), {
      message: 'fast path: keyword "minimum" at #/items/anyOf/0 is not translated',
    })
    assert.throws(
      () =>
        fastPathSchema({
          type: 'object',
          properties: {env: {type: 'object', propertyNames: {type: 'string', enum: ['a']}}},
        }),
      {message: 'fast path: a record at #/env has keys other than strings'},
    )
  })

  it('drops the error objects of ajv’s code and keeps its error count', () => {
    const code = [
      'if(typeof data !== "string"){',
      'validate10.errors = [{instancePath,schemaPath:"#/type",keyword:"type",params:{type: "string"},message:"must be string"}];',
      'return false;',
      '}',
      'const err0 = {instancePath:instancePath+"/a",schemaPath:"#/anyOf/0/type",keyword:"type",params:{}};',
      'if(vErrors === null){vErrors = [err0];}',
      'errors++;',
      '',
    ].join('\n')
    assert.equal(
      withoutErrorDetails(code),
      [
        'if(typeof data !== "string"){',
        'return false;',
        '}',
        'const err0 = null;',
        'if(vErrors === null){vErrors = [err0];}',
        'errors++;',
        '',
      ].join('\n'),
    )
    // Only whole lines of those two forms are taken: anything else holding an error object stops the build.
    for (const odd of [
      'vErrors.push({instancePath:instancePath, keyword: "x"});\n',
      'if(e){validate10.errors = [{instancePath:instancePath}];\n',
      'x; const err0 = {instancePath:instancePath};\n',
      'const err0 = {instancePath:instancePath}; x\n',
    ]) {
      assert.throws(() => withoutErrorDetails(odd), {
        message: 'fast path: ajv output has error objects in an unexpected form',
      })
    }
  })

  it('writes a module that imports zod-rules, exports the validator, and says how it is made', () => {
    const source = generateFastPathSource()
    const lines = source.split('\n')
    assert.deepEqual(lines.slice(0, 4), [
      '// @ts-nocheck',
      '// Generated by scripts/generate-fast-path.js from src/lib/definition/schema.ts (zod -> JSON Schema -> ajv',
      '// standalone code). Do not edit: `npm run build` writes it again.',
      "import {fastPathFormats, hasNoProtoMember, isPlainRecord} from './zod-rules.js'",
    ])
    assert.match(source, /\nexport const matchesJobDefinitionSchema: \(value: unknown\) => boolean = validate\d+\n$/)
    assert.doesNotMatch(source, /instancePath:|\brequire\(|"use strict"/)
  })
})
