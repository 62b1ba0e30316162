/**
 * The translation of a spec 0.1 definition to the form the live network's nodes accept (network-form/translate.ts):
 * what it writes, every change it reports for `--dry-run`, and every refusal, word for word.
 */
import {strict as assert} from 'node:assert'

import {toNetworkForm, type Translation} from '../../../src/lib/definition/network-form/translate.js'
import type {JobDefinition} from '../../../src/lib/definition/schema.js'
import {validateJobDefinition} from '../../../src/lib/definition/validate.js'
import {HTTP_HEALTH_CHECK} from '../../helpers/definitions.js'

type Json = Record<string, unknown>

/** A spec-valid definition of one container/run operation (checked, as the translation only takes those). */
function job(args: Json, extra: Json = {}): JobDefinition {
  const definition = {
    version: '0.1',
    type: 'container',
    ...extra,
    ops: [{id: 'run', type: 'container/run', args: {image: 'ubuntu', ...args}}],
  }
  const verdict = validateJobDefinition(definition)
  assert.ok(verdict.success, JSON.stringify(verdict.errors))
  return definition as unknown as JobDefinition
}

function translated(spec: JobDefinition): Extract<Translation, {ok: true}> {
  const translation = toNetworkForm(spec)
  assert.ok(translation.ok, JSON.stringify(!translation.ok && translation.issues))
  return translation
}

function refused(spec: JobDefinition): Extract<Translation, {ok: false}>['issues'] {
  const translation = toNetworkForm(spec)
  assert.equal(translation.ok, false, JSON.stringify(translation))
  return translation.ok ? [] : translation.issues
}

const META_HINT = 'write it as a string (JSON text, "true", "null"), or move it one level up'
const META_TAIL = 'in meta: only strings, numbers, lists of them, and objects of those'
const http = HTTP_HEALTH_CHECK
const firstArgs = (t: {document: {ops: {args: Json}[]}}) => t.document.ops[0]!.args

describe("translating a spec 0.1 definition to the network's form", () => {
  it('leaves a definition that needs no change as it was, minus $schema, and reports no change', () => {
    const spec = job({cmd: ['echo', 'hi'], env: {A: '1'}}, {$schema: 'https://example.com/s.json', meta: {n: 1}})
    const {document, changes} = translated(spec)
    assert.deepEqual(changes, [])
    const {$schema, ...rest} = spec as unknown as Json
    assert.equal($schema, 'https://example.com/s.json')
    assert.deepEqual(document, rest)
    assert.equal('$schema' in (spec as unknown as Json), true, 'the definition given is not modified')
  })

  describe('required_vram', () => {
    const twoOps = (meta?: Json): JobDefinition => {
      const definition = {
        version: '0.1',
        type: 'container',
        ...(meta ? {meta} : {}),
        ops: [
          {id: 'a', type: 'container/run', args: {image: 'x', required_vram: 12}},
          {id: 'b', type: 'container/run', args: {image: 'x', required_vram: 4}},
        ],
      }
      assert.ok(validateJobDefinition(definition).success)
      return definition as unknown as JobDefinition
    }
    const MOVED = 'moved to meta.system_resources.required_vram (the largest of all)'

    it("moves every operation's required_vram to meta, keeping the largest, and names each move", () => {
      const {document, changes} = translated(twoOps())
      assert.deepEqual(document.meta, {system_resources: {required_vram: 12}})
      assert.deepEqual(
        document.ops.map((op) => op.args),
        [{image: 'x'}, {image: 'x'}],
      )
      assert.deepEqual(changes, [
        {path: 'ops[0].args.required_vram', change: MOVED},
        {path: 'ops[1].args.required_vram', change: MOVED},
      ])
    })

    it("keeps meta's own required_vram when it is larger, and the operations' when they ask for more", () => {
      const larger = translated(twoOps({trigger: 'cli', system_resources: {required_vram: 16, gpu: 'A100'}}))
      assert.deepEqual(larger.document.meta, {trigger: 'cli', system_resources: {required_vram: 16, gpu: 'A100'}})
      const smaller = translated(twoOps({system_resources: {required_vram: '6'}}))
      assert.deepEqual(smaller.document.meta, {system_resources: {required_vram: 12}})
    })

    for (const [stated, shown] of [
      ['lots', '"lots"'],
      ['', '""'],
      ['  ', '"  "'],
    ] as const) {
      it(`refuses to join them to a stated required_vram of ${shown}, which is no number`, () => {
        assert.deepEqual(refused(twoOps({system_resources: {required_vram: stated}})), [
          {
            path: 'meta.system_resources.required_vram',
            pointer: '/meta/system_resources/required_vram',
            code: 'no_network_equivalent',
            message: `is ${shown}, not a number, so the operations' required_vram cannot join it`,
            hint: 'give it in GiB as a number',
          },
        ])
      })
    }
  })

  describe('meta', () => {
    it('takes strings, numbers, lists of them and one level of object of those, as they are', () => {
      const meta = {trigger: 'dashboard', n: 1, s: 'x', tags: ['a', 2], none: [], o: {k: 'v', l: [1, 'b']}}
      const {document, changes} = translated(job({}, {meta}))
      assert.deepEqual(document.meta, meta)
      assert.deepEqual(changes, [])
    })

    it('refuses null, a boolean, a list holding an object and an object too deep, each named and said why', () => {
      const meta = {gone: null, flag: true, mixed: ['a', {b: 1}], o: {deep: {c: 1}, off: false, list: [[1]]}}
      assert.deepEqual(refused(job({}, {meta})), [
        {
          path: 'meta.gone',
          pointer: '/meta/gone',
          code: 'no_network_equivalent',
          message: `the network's nodes refuse null ${META_TAIL}`,
          hint: META_HINT,
        },
        {
          path: 'meta.flag',
          pointer: '/meta/flag',
          code: 'no_network_equivalent',
          message: `the network's nodes refuse a boolean ${META_TAIL}`,
          hint: META_HINT,
        },
        {
          path: 'meta.mixed',
          pointer: '/meta/mixed',
          code: 'no_network_equivalent',
          message: `the network's nodes refuse a list of lists or objects ${META_TAIL}`,
          hint: META_HINT,
        },
        {
          path: 'meta.o.deep',
          pointer: '/meta/o/deep',
          code: 'no_network_equivalent',
          message: `the network's nodes refuse an object this deep ${META_TAIL}`,
          hint: META_HINT,
        },
        {
          path: 'meta.o.off',
          pointer: '/meta/o/off',
          code: 'no_network_equivalent',
          message: `the network's nodes refuse a boolean ${META_TAIL}`,
          hint: META_HINT,
        },
        {
          path: 'meta.o.list',
          pointer: '/meta/o/list',
          code: 'no_network_equivalent',
          message: `the network's nodes refuse a list of lists or objects ${META_TAIL}`,
          hint: META_HINT,
        },
      ])
    })
  })

  describe('operations', () => {
    it('refuses an operation id with a space, and output, saying what to do instead', () => {
      const spec = job({output: '/out'})
      spec.ops[0]!.id = 'my op'
      assert.deepEqual(refused(spec), [
        {
          path: 'ops[0].id',
          pointer: '/ops/0/id',
          code: 'no_network_equivalent',
          message: "the network's nodes refuse an operation id with a space",
          hint: 'use `-` or `_` instead',
        },
        {
          path: 'ops[0].args.output',
          pointer: '/ops/0/args/output',
          code: 'no_network_equivalent',
          message: "the network's nodes no longer read `output` (@nosana/types has no such member) and fail the job",
          hint: 'remove it: write results to the logs, or upload them from the container',
        },
      ])
    })
  })

  describe('exposed ports', () => {
    it('gives every health check `continuous: false` and names each port whose checks changed', () => {
      const spec = job({
        expose: [
          {port: 80, health_checks: []},
          {port: 81},
          {port: 82, health_checks: [http, {type: 'websocket', expected_response: 'pong'}]},
        ],
      })
      const t = translated(spec)
      assert.deepEqual(firstArgs(t).expose, [
        {port: 80, health_checks: []},
        {port: 81},
        {
          port: 82,
          health_checks: [
            {...http, continuous: false},
            {type: 'websocket', expected_response: 'pong', continuous: false},
          ],
        },
      ])
      assert.deepEqual(t.changes, [
        {path: 'ops[0].args.expose[2].health_checks', change: 'each gained `continuous: false`'},
      ])
    })

    it('leaves a single port number as it is', () => {
      const t = translated(job({expose: 8080}))
      assert.equal(firstArgs(t).expose, 8080)
      assert.deepEqual(t.changes, [])
    })

    it('refuses a port exposed twice in one operation, at the repeat', () => {
      assert.deepEqual(refused(job({expose: [{port: 80}, {port: 81}, {port: 80, type: 'api'}]})), [
        {
          path: 'ops[0].args.expose[2].port',
          pointer: '/ops/0/args/expose/2/port',
          code: 'no_network_equivalent',
          message: "port 80 is exposed twice in this operation: the network's nodes refuse a repeated port",
          hint: 'expose it once, with all its health checks',
        },
      ])
    })
  })

  describe('resources', () => {
    const iam = {ACCESS_KEY_ID: 'k', REGION: 'eu-west-1', SECRET_ACCESS_KEY: '%%secrets.S3_SECRET%%'}
    const at = (member?: string) =>
      member === undefined
        ? {path: 'ops[0].args.resources[0]', pointer: '/ops/0/args/resources/0'}
        : {path: `ops[0].args.resources[0].${member}`, pointer: `/ops/0/args/resources/0/${member}`}

    it('writes S3 with a bucket as one `buckets` location at <url>/<bucket>, files and IAM kept, and says so', () => {
      const t = translated(
        job({
          resources: [
            {type: 'S3', target: '/d', url: 'https://s3.example.com//', bucket: 'data', files: ['x.bin'], IAM: iam},
            {type: 'S3', target: '/e', url: 'https://s3.example.com/eu', bucket: 'logs'},
          ],
        }),
      )
      assert.deepEqual(firstArgs(t).resources, [
        {type: 'S3', target: '/d', IAM: iam, buckets: [{url: 'https://s3.example.com/data', files: ['x.bin']}]},
        {type: 'S3', target: '/e', buckets: [{url: 'https://s3.example.com/eu/logs'}]},
      ])
      const change = '`url` and `bucket` became `buckets: [{url: "<url>/<bucket>", files}]`'
      assert.deepEqual(t.changes, [
        {path: 'ops[0].args.resources[0]', change},
        {path: 'ops[0].args.resources[1]', change},
      ])
    })

    it('leaves S3 at a url without a bucket, and HF with its repo, as they are', () => {
      const resources = [
        {type: 'S3', target: '/d', url: 'https://s3.example.com/b', files: ['x']},
        {type: 'HF', target: '/m', repo: 'org/model', files: ['config.json']},
      ]
      const t = translated(job({resources}))
      assert.deepEqual(firstArgs(t).resources, resources)
      assert.deepEqual(t.changes, [])
    })

    it('refuses HF with url, bucket or IAM, which it reads from Hugging Face by repo', () => {
      const issues = refused(
        job({resources: [{type: 'HF', target: '/m', repo: 'o/m', url: 'https://hf.co', bucket: 'b', IAM: iam}]}),
      )
      assert.deepEqual(
        issues,
        ['url', 'bucket', 'IAM'].map((member) => ({
          ...at(member),
          code: 'no_network_equivalent',
          message: `HF resources on the network take no \`${member}\`: they are read from Hugging Face by \`repo\``,
        })),
      )
    })

    it('refuses HF without repo', () => {
      assert.deepEqual(refused(job({resources: [{type: 'HF', target: '/m'}]})), [
        {
          ...at(),
          code: 'no_network_equivalent',
          message: "an HF resource needs `repo`: the network's nodes refuse one without it",
          hint: 'add `repo`: "org/model"',
        },
      ])
    })

    it('refuses S3 with repo, an IAM that lacks members, and S3 without url', () => {
      assert.deepEqual(
        refused(job({resources: [{type: 'S3', target: '/d', repo: 'o/m', bucket: 'b', IAM: {REGION: 'x'}}]})),
        [
          {
            ...at('repo'),
            code: 'no_network_equivalent',
            message: 'S3 resources on the network take no `repo`: `repo` names a Hugging Face repository',
          },
          {
            ...at('IAM'),
            code: 'no_network_equivalent',
            message: "IAM lacks `ACCESS_KEY_ID`, `SECRET_ACCESS_KEY`: the network's nodes need all three",
            hint: 'give REGION, ACCESS_KEY_ID and SECRET_ACCESS_KEY (%%secrets.NAME%% keeps the keys out of the file)',
          },
          {
            ...at(),
            code: 'no_network_equivalent',
            message: "an S3 resource needs `url`: the network's nodes read nothing without it",
            hint: 'add the endpoint as `url`',
          },
        ],
      )
    })
  })
})
