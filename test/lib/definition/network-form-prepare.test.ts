/**
 * What `job post` would upload, decided before anything is uploaded or paid (network-form/prepare.ts): the bytes,
 * the checks `job post --dry-run` lists with their verdicts, and every refusal, for spec 0.1 definitions and for
 * definitions in the network's newer format.
 */
import {strict as assert} from 'node:assert'

import {NOSANA_TYPES_VERSION} from '../../../src/lib/definition/network-form/nosana-validator.generated.js'
import {
  NETWORK_REFUSALS,
  type Preparation,
  prepareUpload,
  type PreparedUpload,
} from '../../../src/lib/definition/network-form/prepare.js'
import {GpunetError} from '../../../src/lib/errors.js'
import type {Network} from '../../../src/lib/network.js'
import {oneOpDefinition, HTTP_HEALTH_CHECK} from '../../helpers/definitions.js'

type Json = Record<string, unknown>

const VALIDATOR = `@nosana/types ${NOSANA_TYPES_VERSION}`
const job = oneOpDefinition
const http = HTTP_HEALTH_CHECK
const VARIABLES_UNKNOWN =
  'unknown field `variables`; allowed fields are `image`, `gpu`, `entrypoint`, `env`, `work_dir`'

async function prepared(value: unknown, network: Network): Promise<PreparedUpload> {
  const preparation = await prepareUpload(value, network)
  assert.ok(preparation.ok, JSON.stringify(!preparation.ok && preparation.issues))
  return preparation.upload
}

async function refused(value: unknown, network: Network): Promise<Extract<Preparation, {ok: false}>['issues']> {
  const preparation = await prepareUpload(value, network)
  assert.equal(preparation.ok, false, JSON.stringify(preparation))
  return preparation.ok ? [] : preparation.issues
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

describe('preparing a definition for upload to a network', () => {
  it("names the issue codes of a refusal by the network's form, not by the spec", () => {
    assert.deepEqual([...NETWORK_REFUSALS].sort(), ['localnet_cannot_run', 'network_refused', 'no_network_equivalent'])
    assert.equal(NETWORK_REFUSALS.has('invalid_type'), false)
  })

  describe('a spec 0.1 definition', () => {
    it('needing no change: uploaded as indented JSON, runnable as written, three checks passed', async () => {
      const spec = job({cmd: ['echo', 'hi']}, {$schema: 'https://example.com/job.schema.json'})
      const upload = await prepared(spec, 'mainnet')
      const {$schema, ...document} = spec
      assert.ok($schema)
      assert.equal(upload.network, 'mainnet')
      assert.deepEqual(upload.document, document)
      assert.equal(text(upload.bytes), `${JSON.stringify(document, null, 2)}\n`)
      assert.deepEqual(upload.runnable, document)
      assert.deepEqual(upload.changes, [])
      assert.deepEqual(upload.beyondSpec, [])
      assert.deepEqual(upload.checks, [
        {by: 'spec 0.1', verdict: 'valid'},
        {by: 'translation', verdict: 'no change needed'},
        {by: VALIDATOR, verdict: 'accepted'},
      ])
    })

    it('translated with one change: the check says "1 change", the bytes are the translation', async () => {
      const spec = job({expose: [{port: 80, health_checks: [http]}]})
      const upload = await prepared(spec, 'devnet')
      assert.deepEqual(upload.checks[1], {by: 'translation', verdict: '1 change'})
      assert.deepEqual(upload.changes, [
        {path: 'ops[0].args.expose[0].health_checks', change: 'each gained `continuous: false`'},
      ])
      const uploaded = JSON.parse(text(upload.bytes)) as Json
      assert.deepEqual(uploaded, job({expose: [{port: 80, health_checks: [{...http, continuous: false}]}]}))
      assert.deepEqual(upload.runnable, spec, 'as written')
    })

    it("on localnet: a fourth check, the localnet's node runs it, and what it runs", async () => {
      const spec = job({
        required_vram: 4,
        resources: [{type: 'S3', target: '/d', url: 'https://s3.example.com', bucket: 'b'}],
      })
      const upload = await prepared(spec, 'localnet')
      assert.deepEqual(upload.checks, [
        {by: 'spec 0.1', verdict: 'valid'},
        {by: 'translation', verdict: '2 changes'},
        {by: VALIDATOR, verdict: 'accepted'},
        {by: "the localnet's node", verdict: 'runs it'},
      ])
      assert.deepEqual(upload.runnable, {
        version: '0.1',
        type: 'container',
        meta: {system_resources: {required_vram: 4}},
        ops: [
          {
            id: 'run',
            type: 'container/run',
            args: {
              image: 'ubuntu',
              resources: [{type: 'S3', target: '/d', url: 'https://s3.example.com', bucket: 'b'}],
            },
          },
        ],
      })
    })

    it('with no network equivalent: refused with the translation’s issues', async () => {
      const issues = await refused(job({output: '/out'}), 'devnet')
      assert.deepEqual(
        issues.map((i) => [i.path, i.code]),
        [['ops[0].args.output', 'no_network_equivalent']],
      )
    })

    it('refused by the spec: the spec’s errors, without the network’s word on the same member', async () => {
      assert.deepEqual(await refused(job({image: 5}), 'devnet'), [
        {
          path: 'ops[0].args.image',
          pointer: '/ops/0/args/image',
          code: 'invalid_type',
          message: '`image` must be a string, got number 5',
        },
      ])
    })

    it('spec 0.1 beside deployment_id: the rest translated, the id carried as written, a warning', async () => {
      const upload = await prepared(
        job({expose: [{port: 80, health_checks: [http]}]}, {deployment_id: 'svc'}),
        'devnet',
      )
      assert.equal(upload.document.deployment_id, 'svc')
      assert.deepEqual(upload.document.ops[0]!.args.expose, [{port: 80, health_checks: [{...http, continuous: false}]}])
      assert.deepEqual(
        upload.beyondSpec.map((i) => [i.path, i.code]),
        [['deployment_id', 'beyond_spec']],
      )
      assert.equal('deployment_id' in (upload.runnable as Json), false, 'the spec model has no deployment_id')
      assert.deepEqual(upload.checks[0], {by: 'spec 0.1', verdict: 'valid, beside `deployment_id`'})
    })

    it("refuses a deployment_id that is not a string in either form, in the network's words", async () => {
      const spec = job({}, {deployment_id: 7})
      const network = job({expose: [{port: 80, health_checks: [{...http, continuous: true}]}]}, {deployment_id: [1]})
      for (const value of [spec, network]) {
        const issues = await refused(value, 'localnet')
        const issue = issues.find((i) => i.path === 'deployment_id')
        assert.equal(issue?.code, 'network_refused', JSON.stringify(issues))
        assert.match(issue.message, /is refused by .*expected \(string \| undefined\)/)
      }
    })

    it('past the size cap: exit 3 before anything is uploaded', async () => {
      const spec = job({env: {BIG: 'x'.repeat(1024 * 1024)}})
      await assert.rejects(prepareUpload(spec, 'devnet'), (error: unknown) => {
        assert.ok(error instanceof GpunetError)
        assert.equal(error.code, 'definition_too_large')
        assert.equal(error.exitCode, 3)
        return true
      })
    })
  })

  describe("a definition in the network's newer format", () => {
    it('is uploaded as written, $schema stripped, with one warning per member beyond spec 0.1', async () => {
      const newer = job({private: true}, {global: {variables: {A: 'b'}}})
      const upload = await prepared({$schema: 'https://example.com/job.schema.json', ...newer}, 'mainnet')
      assert.deepEqual(upload.document, newer)
      assert.equal(text(upload.bytes), `${JSON.stringify(newer, null, 2)}\n`)
      assert.equal(upload.runnable, null)
      assert.deepEqual(upload.changes, [])
      assert.deepEqual(upload.checks, [
        {by: 'spec 0.1', verdict: 'beyond it (2 members)'},
        {by: VALIDATOR, verdict: 'accepted'},
      ])
      const hint = `${VALIDATOR} accepts it; other clients of spec 0.1 may not`
      assert.deepEqual(upload.beyondSpec, [
        {
          path: 'global.variables',
          pointer: '/global/variables',
          code: 'beyond_spec',
          message: `goes beyond spec 0.1 (${VARIABLES_UNKNOWN}); the network's newer format has it`,
          hint,
        },
        {
          path: 'ops[0].args.private',
          pointer: '/ops/0/args/private',
          code: 'beyond_spec',
          message:
            "goes beyond spec 0.1 (unknown field `private`; allowed fields are `image`, `cmd`, `gpu`, `expose`, `entrypoint`, `env`, `work_dir`, `output`, `required_vram`, `resources`, `authentication`); the network's newer format has it",
          hint,
        },
      ])
    })

    it('counts a single member beyond spec 0.1 as "1 member"', async () => {
      const upload = await prepared(job({}, {global: {variables: {A: 'b'}}}), 'devnet')
      assert.deepEqual(upload.checks[0], {by: 'spec 0.1', verdict: 'beyond it (1 member)'})
    })

    it('is refused when the spec has more against it than unknown members, though the network takes it', async () => {
      const value = {version: '0.1', type: 'container', meta: {trigger: 'api'}, global: {variables: {A: 'b'}}, ops: []}
      assert.deepEqual(await refused(value, 'devnet'), [
        {
          path: 'meta.trigger',
          pointer: '/meta/trigger',
          code: 'invalid_value',
          message: '`trigger` must be one of cli, dashboard, got "api"',
        },
        {path: 'global.variables', pointer: '/global/variables', code: 'unknown_field', message: VARIABLES_UNKNOWN},
        {path: 'ops', pointer: '/ops', code: 'too_few_items', message: '`ops` must have at least 1 operation'},
      ])
    })

    it("is refused when the network refuses it: the spec's reasons, then the network's", async () => {
      assert.deepEqual(await refused(job({output: '/o'}, {global: {variables: {A: 'b'}}}), 'devnet'), [
        {path: 'global.variables', pointer: '/global/variables', code: 'unknown_field', message: VARIABLES_UNKNOWN},
        {
          path: 'ops[0].args.output',
          pointer: '/ops/0/args/output',
          code: 'network_refused',
          message: `is not a member ${VALIDATOR} knows: the network's nodes fail a job that has it`,
        },
      ])
    })

    it("is refused on every network when the network's nodes would never start an operation, naming the ids", async () => {
      const cycle = {
        version: '0.1',
        type: 'container',
        ops: [
          {id: 'a', type: 'container/run', args: {image: 'x'}, execution: {group: 'g', depends_on: ['b']}},
          {id: 'b', type: 'container/run', args: {image: 'x'}, execution: {group: 'g', depends_on: ['a', 'zz']}},
        ],
      }
      for (const network of ['localnet', 'devnet', 'mainnet'] as const) {
        assert.deepEqual(
          (await refused(cycle, network)).map((i) => [i.path, i.code, i.message]),
          [
            ['ops[1].execution.depends_on[1]', 'invalid_value', 'names `zz`, which is no operation of this job'],
            [
              'ops[0].execution.depends_on',
              'invalid_value',
              '`depends_on` goes round in a cycle (a -> b -> a): none of them would ever start',
            ],
          ],
          network,
        )
      }
    })

    it("is refused on localnet, naming what the localnet's node cannot run", async () => {
      const issues = await refused(job({private: true}, {global: {variables: {A: 'b'}}}), 'localnet')
      assert.deepEqual(
        issues.map((i) => [i.path, i.code]),
        [['ops[0].args.private', 'localnet_cannot_run']],
      )
    })
  })

  describe('a value that is no definition', () => {
    it('null, text or a list: the spec says it is no object', async () => {
      assert.deepEqual(await refused(null, 'devnet'), [
        {path: '', pointer: '', code: 'not_an_object', message: 'a job definition must be a JSON object, got null'},
      ])
      assert.deepEqual(await refused('a job', 'devnet'), [
        {path: '', pointer: '', code: 'not_an_object', message: 'a job definition must be a JSON object, got "a job"'},
      ])
      const list = await refused([], 'devnet')
      assert.deepEqual(list[0], {
        path: '',
        pointer: '',
        code: 'not_an_object',
        message: 'a job definition must be a JSON object, got an array',
      })
    })
  })
})
