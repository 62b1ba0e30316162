import {strict as assert} from 'node:assert'

import {validateJobDefinition} from '../../../src/lib/definition/validate.js'
import {everyMemberDefinition as base} from '../../helpers/definitions.js'

type Json = Record<string, unknown>

/** Returns a copy of the base definition with `edit` applied at a dotted path (`undefined` deletes the member). */
function withEdit(path: string, value: unknown): Json {
  const doc = base()
  const keys = path.split('.')
  let node: Record<string, unknown> = doc
  for (const key of keys.slice(0, -1)) node = node[key] as Record<string, unknown>
  const last = keys.at(-1) as string
  if (value === undefined) delete node[last]
  else node[last] = value
  return doc
}

interface Case {
  rule: string
  path: string
  value: unknown
  /** Expected error: [path, code], or null when the edit keeps the definition valid. */
  expect: [string, string] | null
}

const HC = 'ops.0.args.expose.0.health_checks.0'
const RES = 'ops.0.args.resources.0'

const cases: Case[] = [
  // top level
  {rule: 'additional top-level member', path: 'extra', value: 1, expect: ['extra', 'unknown_field']},
  {rule: '$schema is accepted', path: '$schema', value: 'https://x/schema.json', expect: null},
  {rule: '$schema must be a string', path: '$schema', value: 5, expect: ['$schema', 'invalid_type']},
  {rule: 'version required', path: 'version', value: undefined, expect: ['version', 'missing_field']},
  {rule: 'version constant', path: 'version', value: '0.2', expect: ['version', 'invalid_value']},
  {rule: 'version is a string', path: 'version', value: 0.1, expect: ['version', 'invalid_value']},
  {rule: 'type required', path: 'type', value: undefined, expect: ['type', 'missing_field']},
  {rule: 'type constant', path: 'type', value: 'vm', expect: ['type', 'invalid_value']},
  {rule: 'ops required', path: 'ops', value: undefined, expect: ['ops', 'missing_field']},
  {rule: 'ops at least one', path: 'ops', value: [], expect: ['ops', 'too_few_items']},
  {rule: 'ops is an array', path: 'ops', value: {}, expect: ['ops', 'invalid_type']},
  {rule: 'optional members may go', path: 'logistics', value: undefined, expect: null},
  // logistics
  {rule: 'logistics closed', path: 'logistics.other', value: {}, expect: ['logistics.other', 'unknown_field']},
  {
    rule: 'logistics type enum',
    path: 'logistics.send.type',
    value: 'webhook',
    expect: ['logistics.send.type', 'invalid_value'],
  },
  {
    rule: 'logistics type required',
    path: 'logistics.send.type',
    value: undefined,
    expect: ['logistics.send.type', 'missing_field'],
  },
  {
    rule: 'logistics args required',
    path: 'logistics.send.args',
    value: undefined,
    expect: ['logistics.send.args', 'missing_field'],
  },
  {rule: 'logistics entry closed', path: 'logistics.send.x', value: 1, expect: ['logistics.send.x', 'unknown_field']},
  {
    rule: 'logistics args closed',
    path: 'logistics.send.args.x',
    value: 1,
    expect: ['logistics.send.args.x', 'unknown_field'],
  },
  {
    rule: 'endpoint required',
    path: 'logistics.send.args.endpoint',
    value: undefined,
    expect: ['logistics.send.args.endpoint', 'missing_field'],
  },
  {
    rule: 'endpoint is a URI',
    path: 'logistics.send.args.endpoint',
    value: 'not a uri',
    expect: ['logistics.send.args.endpoint', 'invalid_uri'],
  },
  // meta
  {rule: 'meta open', path: 'meta.custom', value: [1, 2], expect: null},
  {rule: 'meta trigger dashboard', path: 'meta.trigger', value: 'dashboard', expect: null},
  {rule: 'meta trigger enum', path: 'meta.trigger', value: 'api', expect: ['meta.trigger', 'invalid_value']},
  {
    rule: 'system_resources string or number',
    path: 'meta.system_resources.x',
    value: true,
    expect: ['meta.system_resources.x', 'invalid_type'],
  },
  {
    rule: 'system_resources is an object',
    path: 'meta.system_resources',
    value: 'x',
    expect: ['meta.system_resources', 'invalid_type'],
  },
  // global
  {rule: 'global closed', path: 'global.cmd', value: 'x', expect: ['global.cmd', 'unknown_field']},
  {rule: 'global gpu boolean', path: 'global.gpu', value: 'yes', expect: ['global.gpu', 'invalid_type']},
  {rule: 'global entrypoint string', path: 'global.entrypoint', value: 'sh', expect: null},
  {
    rule: 'global entrypoint strings',
    path: 'global.entrypoint',
    value: [1],
    expect: ['global.entrypoint[0]', 'invalid_type'],
  },
  {rule: 'global env values strings', path: 'global.env', value: {A: 1}, expect: ['global.env.A', 'invalid_type']},
  {rule: 'global image string', path: 'global.image', value: 3, expect: ['global.image', 'invalid_type']},
  {rule: 'global work_dir string', path: 'global.work_dir', value: false, expect: ['global.work_dir', 'invalid_type']},
  // operation
  {rule: 'operation closed', path: 'ops.1.name', value: 'x', expect: ['ops[1].name', 'unknown_field']},
  {rule: 'operation id required', path: 'ops.1.id', value: undefined, expect: ['ops[1].id', 'missing_field']},
  {rule: 'operation id string', path: 'ops.1.id', value: 7, expect: ['ops[1].id', 'invalid_type']},
  {rule: 'operation ids unique', path: 'ops.1.id', value: 'run', expect: ['ops[1].id', 'duplicate_id']},
  {rule: 'operation type required', path: 'ops.1.type', value: undefined, expect: ['ops[1].type', 'missing_field']},
  {rule: 'operation type enum', path: 'ops.1.type', value: 'container/exec', expect: ['ops[1].type', 'invalid_value']},
  {rule: 'operation args required', path: 'ops.1.args', value: undefined, expect: ['ops[1].args', 'missing_field']},
  // operation args
  {rule: 'args closed', path: 'ops.1.args.imgae', value: 'x', expect: ['ops[1].args.imgae', 'unknown_field']},
  {rule: 'image required', path: 'ops.1.args.image', value: undefined, expect: ['ops[1].args.image', 'missing_field']},
  {rule: 'image string', path: 'ops.1.args.image', value: ['x'], expect: ['ops[1].args.image', 'invalid_type']},
  {rule: 'cmd string', path: 'ops.1.args.cmd', value: 'echo hi', expect: null},
  {rule: 'cmd empty array', path: 'ops.1.args.cmd', value: [], expect: null},
  {rule: 'cmd not a number', path: 'ops.1.args.cmd', value: 1, expect: ['ops[1].args.cmd', 'invalid_type']},
  {
    rule: 'cmd array of strings',
    path: 'ops.1.args.cmd',
    value: ['a', 2],
    expect: ['ops[1].args.cmd[1]', 'invalid_type'],
  },
  {rule: 'gpu boolean', path: 'ops.1.args.gpu', value: 1, expect: ['ops[1].args.gpu', 'invalid_type']},
  {rule: 'expose number', path: 'ops.1.args.expose', value: 8000, expect: null},
  {
    rule: 'expose not a string',
    path: 'ops.1.args.expose',
    value: '8000',
    expect: ['ops[1].args.expose', 'invalid_type'],
  },
  {
    rule: 'expose array of ports',
    path: 'ops.1.args.expose',
    value: [8000],
    expect: ['ops[1].args.expose[0]', 'invalid_type'],
  },
  {rule: 'entrypoint array', path: 'ops.1.args.entrypoint', value: [], expect: null},
  {
    rule: 'entrypoint type',
    path: 'ops.1.args.entrypoint',
    value: {},
    expect: ['ops[1].args.entrypoint', 'invalid_type'],
  },
  {rule: 'env values strings', path: 'ops.1.args.env', value: {X: true}, expect: ['ops[1].args.env.X', 'invalid_type']},
  {rule: 'env object', path: 'ops.1.args.env', value: ['X=1'], expect: ['ops[1].args.env', 'invalid_type']},
  {rule: 'work_dir string', path: 'ops.1.args.work_dir', value: 1, expect: ['ops[1].args.work_dir', 'invalid_type']},
  {rule: 'output string', path: 'ops.1.args.output', value: 1, expect: ['ops[1].args.output', 'invalid_type']},
  {
    rule: 'required_vram number',
    path: 'ops.1.args.required_vram',
    value: '8GB',
    expect: ['ops[1].args.required_vram', 'invalid_type'],
  },
  {rule: 'resources array', path: 'ops.1.args.resources', value: {}, expect: ['ops[1].args.resources', 'invalid_type']},
  {
    rule: 'authentication closed',
    path: 'ops.0.args.authentication.ecr',
    value: {},
    expect: ['ops[0].args.authentication.ecr', 'unknown_field'],
  },
  // exposed port
  {
    rule: 'port required',
    path: 'ops.0.args.expose.0.port',
    value: undefined,
    expect: ['ops[0].args.expose[0].port', 'missing_field'],
  },
  {
    rule: 'port number',
    path: 'ops.0.args.expose.0.port',
    value: '80',
    expect: ['ops[0].args.expose[0].port', 'invalid_type'],
  },
  {
    rule: 'port closed',
    path: 'ops.0.args.expose.0.public',
    value: true,
    expect: ['ops[0].args.expose[0].public', 'unknown_field'],
  },
  {rule: 'port type api', path: 'ops.0.args.expose.0.type', value: 'api', expect: null},
  {rule: 'port type webapi', path: 'ops.0.args.expose.0.type', value: 'webapi', expect: null},
  {rule: 'port type websocket', path: 'ops.0.args.expose.0.type', value: 'websocket', expect: null},
  {rule: 'port type none', path: 'ops.0.args.expose.0.type', value: 'none', expect: null},
  {
    rule: 'port type enum',
    path: 'ops.0.args.expose.0.type',
    value: 'http',
    expect: ['ops[0].args.expose[0].type', 'invalid_value'],
  },
  {
    rule: 'health_checks array',
    path: 'ops.0.args.expose.0.health_checks',
    value: {},
    expect: ['ops[0].args.expose[0].health_checks', 'invalid_type'],
  },
  // health checks
  {
    rule: 'http path required',
    path: `${HC}.path`,
    value: undefined,
    expect: ['ops[0].args.expose[0].health_checks[0].path', 'missing_field'],
  },
  {
    rule: 'http method required',
    path: `${HC}.method`,
    value: undefined,
    expect: ['ops[0].args.expose[0].health_checks[0].method', 'missing_field'],
  },
  {
    rule: 'http method enum',
    path: `${HC}.method`,
    value: 'PATCH',
    expect: ['ops[0].args.expose[0].health_checks[0].method', 'invalid_value'],
  },
  {rule: 'http method POST', path: `${HC}.method`, value: 'POST', expect: null},
  {
    rule: 'http expected_status required',
    path: `${HC}.expected_status`,
    value: undefined,
    expect: ['ops[0].args.expose[0].health_checks[0].expected_status', 'missing_field'],
  },
  {
    rule: 'http expected_status number',
    path: `${HC}.expected_status`,
    value: '200',
    expect: ['ops[0].args.expose[0].health_checks[0].expected_status', 'invalid_type'],
  },
  {
    rule: 'http headers strings',
    path: `${HC}.headers`,
    value: {X: 1},
    expect: ['ops[0].args.expose[0].health_checks[0].headers.X', 'invalid_type'],
  },
  {rule: 'http body any', path: `${HC}.body`, value: 'text', expect: null},
  {
    rule: 'http closed',
    path: `${HC}.timeout`,
    value: 5,
    expect: ['ops[0].args.expose[0].health_checks[0].timeout', 'unknown_field'],
  },
  {
    rule: 'http no expected_response',
    path: `${HC}.expected_response`,
    value: 'x',
    expect: ['ops[0].args.expose[0].health_checks[0].expected_response', 'unknown_field'],
  },
  {
    rule: 'health check type required',
    path: `${HC}.type`,
    value: undefined,
    expect: ['ops[0].args.expose[0].health_checks[0].type', 'missing_field'],
  },
  {
    rule: 'health check type enum',
    path: `${HC}.type`,
    value: 'tcp',
    expect: ['ops[0].args.expose[0].health_checks[0].type', 'invalid_value'],
  },
  {
    rule: 'websocket expected_response required',
    path: 'ops.0.args.expose.0.health_checks.1.expected_response',
    value: undefined,
    expect: ['ops[0].args.expose[0].health_checks[1].expected_response', 'missing_field'],
  },
  {
    rule: 'websocket closed',
    path: 'ops.0.args.expose.0.health_checks.1.path',
    value: '/',
    expect: ['ops[0].args.expose[0].health_checks[1].path', 'unknown_field'],
  },
  // registry credentials
  {
    rule: 'docker username required',
    path: 'ops.0.args.authentication.docker.username',
    value: undefined,
    expect: ['ops[0].args.authentication.docker.username', 'missing_field'],
  },
  {
    rule: 'docker password required',
    path: 'ops.0.args.authentication.docker.password',
    value: undefined,
    expect: ['ops[0].args.authentication.docker.password', 'missing_field'],
  },
  {rule: 'docker email optional', path: 'ops.0.args.authentication.docker.email', value: undefined, expect: null},
  {
    rule: 'docker server string',
    path: 'ops.0.args.authentication.docker.server',
    value: 1,
    expect: ['ops[0].args.authentication.docker.server', 'invalid_type'],
  },
  {
    rule: 'docker closed',
    path: 'ops.0.args.authentication.docker.token',
    value: 'x',
    expect: ['ops[0].args.authentication.docker.token', 'unknown_field'],
  },
  // resources
  {
    rule: 'resource type required',
    path: `${RES}.type`,
    value: undefined,
    expect: ['ops[0].args.resources[0].type', 'missing_field'],
  },
  {
    rule: 'resource type enum',
    path: `${RES}.type`,
    value: 's3',
    expect: ['ops[0].args.resources[0].type', 'invalid_value'],
  },
  {
    rule: 'resource target required',
    path: `${RES}.target`,
    value: undefined,
    expect: ['ops[0].args.resources[0].target', 'missing_field'],
  },
  {
    rule: 'resource url is a URI',
    path: `${RES}.url`,
    value: 'bucket/key',
    expect: ['ops[0].args.resources[0].url', 'invalid_uri'],
  },
  {
    rule: 'resource files strings',
    path: `${RES}.files`,
    value: [1],
    expect: ['ops[0].args.resources[0].files[0]', 'invalid_type'],
  },
  {
    rule: 'resource repo string',
    path: `${RES}.repo`,
    value: 1,
    expect: ['ops[0].args.resources[0].repo', 'invalid_type'],
  },
  {
    rule: 'resource bucket string',
    path: `${RES}.bucket`,
    value: 1,
    expect: ['ops[0].args.resources[0].bucket', 'invalid_type'],
  },
  {
    rule: 'resource closed',
    path: `${RES}.region`,
    value: 'x',
    expect: ['ops[0].args.resources[0].region', 'unknown_field'],
  },
  {
    rule: 'IAM closed',
    path: `${RES}.IAM.SESSION_TOKEN`,
    value: 'x',
    expect: ['ops[0].args.resources[0].IAM.SESSION_TOKEN', 'unknown_field'],
  },
  {
    rule: 'IAM strings',
    path: `${RES}.IAM.REGION`,
    value: 1,
    expect: ['ops[0].args.resources[0].IAM.REGION', 'invalid_type'],
  },
  {rule: 'IAM object', path: `${RES}.IAM`, value: 'key', expect: ['ops[0].args.resources[0].IAM', 'invalid_type']},
]

describe('validateJobDefinition', () => {
  it('accepts the base definition that uses every member', () => {
    const result = validateJobDefinition(base())
    assert.deepEqual(result.errors, undefined)
    assert.equal(result.success, true)
    assert.equal(result.data?.ops.length, 2)
  })

  for (const c of cases) {
    const label = c.expect ? `rejects: ${c.rule}` : `accepts: ${c.rule}`
    it(label, () => {
      const result = validateJobDefinition(withEdit(c.path, c.value))
      if (c.expect === null) {
        assert.equal(result.success, true, JSON.stringify(result.errors))
        return
      }
      assert.equal(result.success, false)
      const found = result.errors?.map((e) => [e.path, e.code])
      assert.deepEqual(found, [c.expect], `errors were ${JSON.stringify(result.errors)}`)
    })
  }

  it('rejects a value that is not an object', () => {
    for (const value of [null, [], 'x', 3]) {
      const result = validateJobDefinition(value)
      assert.equal(result.success, false)
      assert.equal(result.errors?.[0]?.code, 'not_an_object')
    }
  })

  it('reports every violation at once, not only the first', () => {
    const doc = base()
    doc.version = '1'
    doc.extra = true
    const ops = doc.ops as Json[]
    delete (ops[1]?.args as Json).image
    ;(ops[1] as Json).id = 'run'
    const result = validateJobDefinition(doc)
    assert.deepEqual(result.errors?.map((e) => e.code).sort(), [
      'duplicate_id',
      'invalid_value',
      'missing_field',
      'unknown_field',
    ])
  })

  it('words messages for a person and keeps a JSON pointer', () => {
    const doc = base()
    const args = (doc.ops as Json[])[1]?.args as Json
    delete args.image
    args.imgae = 'ubuntu'
    ;((doc.ops as Json[])[0]?.args as {expose: {health_checks: Json[]}[]}).expose[0]!.health_checks[0]!.method = 'PATCH'
    const errors = validateJobDefinition(doc).errors ?? []
    const byPath = Object.fromEntries(errors.map((e) => [e.path, e]))
    assert.equal(byPath['ops[1].args.image']?.message, 'missing required field `image`')
    assert.equal(byPath['ops[1].args.image']?.pointer, '/ops/1/args/image')
    assert.equal(byPath['ops[1].args.imgae']?.message, 'unknown field `imgae`; did you mean `image`?')
    assert.equal(
      byPath['ops[0].args.expose[0].health_checks[0].method']?.message,
      '`method` must be one of GET, POST, PUT, DELETE, got "PATCH"',
    )
  })

  it('suggests the right case for an enum value', () => {
    const result = validateJobDefinition(withEdit(`${HC}.method`, 'get'))
    assert.match(result.errors?.[0]?.message ?? '', /did you mean `GET`\?/)
  })

  it('escapes odd member names in paths and pointers', () => {
    const result = validateJobDefinition(withEdit('ops.0.args.env', {'MY-KEY/x': 1}))
    assert.equal(result.errors?.[0]?.path, 'ops[0].args.env["MY-KEY/x"]')
    assert.equal(result.errors?.[0]?.pointer, '/ops/0/args/env/MY-KEY~1x')
  })
})
