import {strict as assert} from 'node:assert'
import {readFile} from 'node:fs/promises'

import {Ajv2020} from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

import {jobDefinitionJsonSchema} from '../../../src/lib/definition/json-schema.js'
import {validateJobDefinition} from '../../../src/lib/definition/validate.js'
import {listTemplates} from '../../../src/lib/definition/templates.js'

const SHIPPED = new URL('../../../schema/job-definition.schema.json', import.meta.url)

describe('job definition JSON Schema', () => {
  it('is draft 2020-12 and identical to the shipped schema file', async () => {
    const shipped = JSON.parse(await readFile(SHIPPED, 'utf8'))
    const generated = jobDefinitionJsonSchema()
    assert.equal(generated.$schema, 'https://json-schema.org/draft/2020-12/schema')
    assert.deepEqual(
      shipped,
      generated,
      'schema/job-definition.schema.json is stale: run `npm run build && npm run schema`',
    )
  })

  it('agrees with validateJobDefinition on templates and on broken definitions', async () => {
    const ajv = new Ajv2020({allErrors: true, strict: false})
    ;(addFormats as unknown as (a: Ajv2020) => void)(ajv)
    const check = ajv.compile(jobDefinitionJsonSchema())
    const samples: unknown[] = []
    for (const t of await listTemplates()) samples.push(JSON.parse(await readFile(t.file, 'utf8')))
    const ok = samples[0] as Record<string, unknown>
    samples.push(
      {...ok, version: 0.1},
      {...ok, extra: 1},
      {...ok, ops: []},
      {...ok, meta: {anything: 1, trigger: 'cli'}},
      {...ok, meta: {trigger: 'web'}},
      {
        ...ok,
        ops: [
          {
            id: 'a',
            type: 'container/run',
            args: {image: 'x', expose: [{port: 1, health_checks: [{type: 'websocket', expected_response: 'x'}]}]},
          },
        ],
      },
      {
        ...ok,
        ops: [
          {
            id: 'a',
            type: 'container/run',
            args: {image: 'x', expose: [{port: 1, health_checks: [{type: 'websocket', path: '/'}]}]},
          },
        ],
      },
      {...ok, logistics: {send: {type: 'api', args: {endpoint: 'not a uri'}}}},
      {...ok, ops: [{id: 'a', type: 'container/run', args: {image: 'x', cmd: []}}]},
    )
    for (const sample of samples) {
      assert.equal(check(sample), validateJobDefinition(sample).success, JSON.stringify(sample).slice(0, 200))
    }
  })
})
