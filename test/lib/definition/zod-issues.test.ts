import {strict as assert} from 'node:assert'

import {array, literal, number, object, record, strictObject, string, union, type z} from 'zod'

import {validateJobDefinition} from '../../../src/lib/definition/validate.js'
import {convertZodIssues, describeValue, suggest} from '../../../src/lib/definition/zod-issues.js'
import {everyMemberDefinition as base} from '../../helpers/definitions.js'

type Json = Record<string, unknown>
/** One reported problem as `gpunet job validate` prints it: where, the stable code, and the words. */
type Reported = [path: string, code: string, message: string]

const HC = 'ops.0.args.expose.0.health_checks'

/** The errors of the base definition (valid, every member used) after setting one member at a dotted path. */
function errorsAfter(path: string, value: unknown): Reported[] {
  const doc = base()
  const keys = path.split('.')
  let node: Json = doc
  for (const key of keys.slice(0, -1)) node = node[key] as Json
  const last = keys.at(-1) as string
  if (value === undefined) delete node[last]
  else node[last] = value
  return reported(doc)
}

function reported(value: unknown): Reported[] {
  const result = validateJobDefinition(value)
  assert.equal(result.success, false, 'expected the definition to be refused')
  return (result.errors ?? []).map((e) => [e.path, e.code, e.message])
}

/** The issues of a schema other than the job definition's, converted as the job definition's are. */
function convertedBy(schema: z.ZodType, input: unknown): Reported[] {
  const parsed = schema.safeParse(input)
  assert.equal(parsed.success, false, 'expected the value to be refused')
  return convertZodIssues(parsed.error?.issues ?? [], input, schema).map((e) => [e.path, e.code, e.message])
}

describe('zod issues in words (what `gpunet job validate` prints)', () => {
  it('names the JSON type each kind of member takes', () => {
    assert.deepEqual(errorsAfter('ops', {}), [['ops', 'invalid_type', '`ops` must be an array, got an object']])
    assert.deepEqual(errorsAfter('global.gpu', 'yes'), [
      ['global.gpu', 'invalid_type', '`gpu` must be a boolean (true or false), got "yes"'],
    ])
    assert.deepEqual(errorsAfter('ops.1.args.required_vram', '8GB'), [
      ['ops[1].args.required_vram', 'invalid_type', '`required_vram` must be a number, got "8GB"'],
    ])
    assert.deepEqual(errorsAfter('ops.1', 5), [['ops[1]', 'invalid_type', '`ops[1]` must be an object, got number 5']])
    // A record (env) is an object to the person who writes it.
    assert.deepEqual(errorsAfter('ops.1.args.env', ['X=1']), [
      ['ops[1].args.env', 'invalid_type', '`env` must be an object, got an array'],
    ])
    assert.deepEqual(errorsAfter('global.image', 3), [
      ['global.image', 'invalid_type', '`image` must be a string, got number 3'],
    ])
  })

  it('says what a member of two kinds takes, in the spec’s words', () => {
    assert.deepEqual(errorsAfter('ops.1.args.cmd', 1), [
      ['ops[1].args.cmd', 'invalid_type', '`cmd` must be a string or an array of strings, got number 1'],
    ])
    assert.deepEqual(errorsAfter('global.entrypoint', {}), [
      ['global.entrypoint', 'invalid_type', '`entrypoint` must be a string or an array of strings, got an object'],
    ])
    assert.deepEqual(errorsAfter('ops.1.args.expose', '8000'), [
      ['ops[1].args.expose', 'invalid_type', '`expose` must be a port number or an array of exposed ports, got "8000"'],
    ])
    // A system resource is named by the job's author; its kinds come from the schema.
    assert.deepEqual(errorsAfter('meta.system_resources.x', true), [
      ['meta.system_resources.x', 'invalid_type', '`x` must be a string or a number, got boolean true'],
    ])
    assert.deepEqual(errorsAfter('meta.system_resources.system_resources', true), [
      [
        'meta.system_resources.system_resources',
        'invalid_type',
        '`system_resources` must be a string or a number, got boolean true',
      ],
    ])
    // Named like a member with a union of its own: still a system resource's kinds.
    for (const name of ['cmd', 'entrypoint', 'expose']) {
      assert.deepEqual(errorsAfter(`meta.system_resources.${name}`, true), [
        [`meta.system_resources.${name}`, 'invalid_type', `\`${name}\` must be a string or a number, got boolean true`],
      ])
    }
  })

  it('reports the problems inside an array that is the right kind, not the member’s kind', () => {
    assert.deepEqual(errorsAfter('ops.1.args.expose', [{port: '80', public: true}]), [
      ['ops[1].args.expose[0].port', 'invalid_type', '`port` must be a number, got "80"'],
      [
        'ops[1].args.expose[0].public',
        'unknown_field',
        'unknown field `public`; allowed fields are `port`, `type`, `health_checks`',
      ],
    ])
    assert.deepEqual(errorsAfter('ops.1.args.cmd', ['a', 2]), [
      ['ops[1].args.cmd[1]', 'invalid_type', '`cmd[1]` must be a string, got number 2'],
    ])
  })

  it('refuses a document that is not an object, saying what it is', () => {
    const cases: [unknown, string][] = [
      [null, 'null'],
      [[], 'an array'],
      ['x', '"x"'],
      [3, 'number 3'],
      [true, 'boolean true'],
      [undefined, 'undefined'],
    ]
    for (const [value, got] of cases) {
      assert.deepEqual(reported(value), [['', 'not_an_object', `a job definition must be a JSON object, got ${got}`]])
    }
  })

  it('quotes a string it got in full up to 40 characters, and the start of a longer one', () => {
    const forty = 'y'.repeat(40)
    assert.deepEqual(errorsAfter('ops.1.args.gpu', forty), [
      ['ops[1].args.gpu', 'invalid_type', `\`gpu\` must be a boolean (true or false), got "${forty}"`],
    ])
    assert.deepEqual(errorsAfter('ops.1.args.gpu', `${'y'.repeat(37)}zzzz`), [
      [
        'ops[1].args.gpu',
        'invalid_type',
        `\`gpu\` must be a boolean (true or false), got a string ("${'y'.repeat(37)}...")`,
      ],
    ])
  })

  it('describes values JSON cannot hold by their type', () => {
    assert.equal(describeValue(undefined), 'undefined')
    assert.equal(describeValue(10n), 'bigint')
    assert.equal(
      describeValue(() => 0),
      'function',
    )
    assert.equal(describeValue(false), 'boolean false')
    assert.equal(describeValue(-1.5), 'number -1.5')
    assert.equal(describeValue({}), 'an object')
    assert.deepEqual(errorsAfter('ops.1.args.required_vram', 10n), [
      ['ops[1].args.required_vram', 'invalid_type', '`required_vram` must be a number, got bigint'],
    ])
  })

  it('quotes the one value a constant member takes, noting its type when the value got is of another', () => {
    assert.deepEqual(errorsAfter('version', 0.1), [
      ['version', 'invalid_value', '`version` must be "0.1" (a string), got number 0.1'],
    ])
    assert.deepEqual(errorsAfter('version', '0.2'), [
      ['version', 'invalid_value', '`version` must be "0.1", got "0.2"'],
    ])
    assert.deepEqual(errorsAfter('type', 'vm'), [['type', 'invalid_value', '`type` must be "container", got "vm"']])
  })

  it('lists the values an enum takes, with a "did you mean" for a near miss', () => {
    assert.deepEqual(errorsAfter('meta.trigger', 5), [
      ['meta.trigger', 'invalid_value', '`trigger` must be one of cli, dashboard, got number 5'],
    ])
    // Too far from every value to be a typo.
    assert.deepEqual(errorsAfter('meta.trigger', 'API'), [
      ['meta.trigger', 'invalid_value', '`trigger` must be one of cli, dashboard, got "API"'],
    ])
    // Another case of a value is always that value, however far the letters are from the others'.
    assert.deepEqual(errorsAfter(`${HC}.0.method`, 'put'), [
      [
        'ops[0].args.expose[0].health_checks[0].method',
        'invalid_value',
        '`method` must be one of GET, POST, PUT, DELETE; did you mean `PUT`?',
      ],
    ])
    assert.deepEqual(errorsAfter('ops.0.args.resources.1.type', 'hf'), [
      ['ops[0].args.resources[1].type', 'invalid_value', '`type` must be one of S3, HF; did you mean `HF`?'],
    ])
    assert.deepEqual(errorsAfter('ops.1.type', 'x'.repeat(50)), [
      [
        'ops[1].type',
        'invalid_value',
        `\`type\` must be one of container/run, container/create-volume, got a string ("${'x'.repeat(37)}...")`,
      ],
    ])
  })

  it('lists the kinds of health check for an unknown one', () => {
    assert.deepEqual(errorsAfter(`${HC}.0.type`, 'grpc'), [
      [
        'ops[0].args.expose[0].health_checks[0].type',
        'invalid_value',
        '`type` must be one of http, websocket, got "grpc"',
      ],
    ])
    assert.deepEqual(errorsAfter(`${HC}.0.type`, 'HTTP'), [
      [
        'ops[0].args.expose[0].health_checks[0].type',
        'invalid_value',
        '`type` must be one of http, websocket; did you mean `http`?',
      ],
    ])
  })

  it('asks for an absolute URI', () => {
    assert.deepEqual(errorsAfter('ops.0.args.resources.0.url', 'bucket/key'), [
      [
        'ops[0].args.resources[0].url',
        'invalid_uri',
        '`url` must be an absolute URI such as https://example.com/path, got "bucket/key"',
      ],
    ])
  })

  it('asks for at least one operation', () => {
    assert.deepEqual(errorsAfter('ops', []), [['ops', 'too_few_items', '`ops` must have at least 1 operation']])
  })

  it('names a missing required field', () => {
    assert.deepEqual(errorsAfter('ops.1.args.image', undefined), [
      ['ops[1].args.image', 'missing_field', 'missing required field `image`'],
    ])
    assert.deepEqual(errorsAfter('version', undefined), [
      ['version', 'missing_field', 'missing required field `version`'],
    ])
  })

  describe('an unknown field', () => {
    it('gets a "did you mean" for a typo of an allowed field', () => {
      assert.deepEqual(errorsAfter('ops.1.args.imgae', 'x'), [
        ['ops[1].args.imgae', 'unknown_field', 'unknown field `imgae`; did you mean `image`?'],
      ])
      // Two edits from a five-letter field is still a typo, though the field typed has three letters.
      assert.deepEqual(errorsAfter('ops.1.args.img', 'x'), [
        ['ops[1].args.img', 'unknown_field', 'unknown field `img`; did you mean `image`?'],
      ])
    })

    it('gets the list of allowed fields when no allowed field is near; `$schema` is not offered', () => {
      assert.deepEqual(errorsAfter('extra', 1), [
        [
          'extra',
          'unknown_field',
          'unknown field `extra`; allowed fields are `version`, `type`, `logistics`, `meta`, `global`, `ops`',
        ],
      ])
      assert.deepEqual(errorsAfter('ops.1.args.zzzzzzzz', 1), [
        [
          'ops[1].args.zzzzzzzz',
          'unknown_field',
          'unknown field `zzzzzzzz`; allowed fields are `image`, `cmd`, `gpu`, `expose`, `entrypoint`, `env`, ' +
            '`work_dir`, `output`, `required_vram`, `resources`, `authentication`',
        ],
      ])
    })

    it('gets the fields of an optional member', () => {
      assert.deepEqual(errorsAfter('logistics.other', {}), [
        ['logistics.other', 'unknown_field', 'unknown field `other`; allowed fields are `send`, `receive`'],
      ])
    })

    it('gets the fields of an exposed port, the array form of `expose`', () => {
      assert.deepEqual(errorsAfter('ops.0.args.expose.0.public', true), [
        [
          'ops[0].args.expose[0].public',
          'unknown_field',
          'unknown field `public`; allowed fields are `port`, `type`, `health_checks`',
        ],
      ])
    })

    it('gets the fields of the kind of health check its `type` names', () => {
      assert.deepEqual(errorsAfter(`${HC}.0.zz`, 1), [
        [
          'ops[0].args.expose[0].health_checks[0].zz',
          'unknown_field',
          'unknown field `zz`; allowed fields are `type`, `path`, `method`, `expected_status`, `headers`, `body`',
        ],
      ])
      // `path` belongs to an http check, not to this websocket one: no "did you mean `path`".
      assert.deepEqual(errorsAfter(`${HC}.1.path`, '/'), [
        [
          'ops[0].args.expose[0].health_checks[1].path',
          'unknown_field',
          'unknown field `path`; allowed fields are `type`, `expected_response`',
        ],
      ])
    })
  })

  describe('suggest', () => {
    it('suggests nothing from no candidates', () => {
      assert.equal(suggest('image', []), undefined)
    })

    it('prefers the candidate that differs only in case', () => {
      assert.equal(suggest('put', ['GET', 'POST', 'PUT', 'DELETE']), 'PUT')
      assert.equal(suggest('hf', ['S3', 'HF']), 'HF')
    })

    it('suggests a near miss and nothing for a different word', () => {
      assert.equal(suggest('img', ['image', 'cmd']), 'image')
      assert.equal(suggest('API', ['cli', 'dashboard']), undefined)
    })
  })

  describe('with schemas beyond the job definition’s', () => {
    it('counts a minimum of items other than operations, in the plural past one', () => {
      const schema = strictObject({tags: array(string()).min(2), labels: array(string()).min(1)})
      assert.deepEqual(convertedBy(schema, {tags: ['a'], labels: []}), [
        ['tags', 'too_few_items', '`tags` must have at least 2 items'],
        ['labels', 'too_few_items', '`labels` must have at least 1 item'],
      ])
    })

    it('names the kinds of a union it has no words for, each once, joined with "or"', () => {
      const schema = strictObject({u: union([string(), number(), array(string()), string(), literal('x')])})
      assert.deepEqual(convertedBy(schema, {u: true}), [
        ['u', 'invalid_type', '`u` must be a string or a number or an array, got boolean true'],
      ])
    })

    it('reports the union member of the value’s kind with the fewest problems', () => {
      const schema = strictObject({box: union([object({a: string(), b: string()}), object({a: string()})])})
      assert.deepEqual(convertedBy(schema, {box: {a: 1}}), [
        ['box.a', 'invalid_type', '`a` must be a string, got number 1'],
      ])
    })

    it('names the fields of the union member that fits the value: an object beside a string, an array beside an object', () => {
      const schema = strictObject({
        box: union([string(), strictObject({inner: strictObject({p: string()})})]),
        list: union([strictObject({p: string()}), array(strictObject({q: string()}))]),
      })
      assert.deepEqual(convertedBy(schema, {box: {inner: {p: 'x', zz: 1}}, list: [{q: 'y', yy: 2}]}), [
        ['box.inner.zz', 'unknown_field', 'unknown field `zz`; allowed fields are `p`'],
        ['list[0].yy', 'unknown_field', 'unknown field `yy`; allowed fields are `q`'],
      ])
    })

    it('names the fields of a nullable member, a defaulted one and a record’s values', () => {
      const schema = strictObject({
        a: strictObject({b: string()}).nullable(),
        c: strictObject({d: string()}).default({d: 'x'}),
        ports: record(string(), strictObject({port: number()})),
      })
      assert.deepEqual(
        convertedBy(schema, {a: {b: 'y', zzz: 1}, c: {d: 'x', qqq: 2}, ports: {web: {port: 1, prot: 2}}}),
        [
          ['a.zzz', 'unknown_field', 'unknown field `zzz`; allowed fields are `b`'],
          ['c.qqq', 'unknown_field', 'unknown field `qqq`; allowed fields are `d`'],
          ['ports.web.prot', 'unknown_field', 'unknown field `prot`; did you mean `port`?'],
        ],
      )
    })

    it('names no allowed fields where none are allowed', () => {
      assert.deepEqual(convertedBy(strictObject({empty: strictObject({})}), {empty: {a: 1}}), [
        ['empty.a', 'unknown_field', 'unknown field `a`'],
      ])
    })

    it('passes on zod’s own words for a rule it has none for, after the member’s name', () => {
      const schema = strictObject({name: string().max(3)})
      const parsed = schema.safeParse({name: 'abcdef'})
      const zodMessage = parsed.error?.issues[0]?.message
      assert.ok(zodMessage)
      assert.deepEqual(convertedBy(schema, {name: 'abcdef'}), [['name', 'invalid', `\`name\`: ${zodMessage}`]])
    })
  })
})
