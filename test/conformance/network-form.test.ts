/**
 * What `job post` uploads is what the live network's nodes take: every template, a corpus of spec-valid definitions
 * and the spec-valid cases the network refuses, each judged by the network's own validators as published on the
 * npm registry (@nosana/types, the one nodes run, and @nosana/sdk's), not by gpunet's bundled copy.
 */
import {strict as assert} from 'node:assert'
import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {validateJobDefinition as typesValidate} from '@nosana/types'
import {validateJobDefinition as sdkValidate} from '@nosana/sdk'

import {prepareUpload} from '../../src/lib/definition/network-form/prepare.js'
import {runnableOnLocalnet} from '../../src/lib/definition/network-form/read.js'
import {validateJobDefinition} from '../../src/lib/definition/validate.js'
import {everyMemberDefinition, HTTP_HEALTH_CHECK, oneOpDefinition} from '../helpers/definitions.js'

const TEMPLATES = join(import.meta.dirname, '..', '..', 'job-templates')
const NETWORKS = ['localnet', 'devnet', 'mainnet'] as const

type Json = Record<string, unknown>
const job = oneOpDefinition
const http = HTTP_HEALTH_CHECK
const iam = {ACCESS_KEY_ID: 'k', REGION: 'eu-west-1', SECRET_ACCESS_KEY: '%%secrets.S3_SECRET%%'}

/** Spec-valid definitions the network's nodes take once translated. */
const ACCEPTED: [string, Json][] = [
  ['the smallest job', job({})],
  [
    'a string command, env, work_dir and a string entrypoint',
    job({cmd: 'echo hi', env: {A: '1'}, work_dir: '/w', entrypoint: 'sh'}),
  ],
  ['an empty command list', job({cmd: []})],
  ['a single exposed port', job({expose: 8080})],
  [
    'ports with both health check shapes',
    job({
      expose: [
        {port: 80, type: 'web', health_checks: [http, {type: 'websocket', expected_response: 'pong'}]},
        {port: 81},
      ],
    }),
  ],
  [
    'an http health check with headers and a body',
    job({expose: [{port: 80, health_checks: [{...http, method: 'POST', headers: {A: 'b'}, body: {q: [1]}}]}]}),
  ],
  [
    'required_vram on two operations and in meta',
    {
      version: '0.1',
      type: 'container',
      meta: {system_resources: {required_vram: 6}},
      ops: [
        {id: 'a', type: 'container/run', args: {image: 'x', required_vram: 4}},
        {id: 'b', type: 'container/run', args: {image: 'x', required_vram: 12}},
      ],
    },
  ],
  [
    'S3 with bucket and files, and full IAM',
    job({
      resources: [{type: 'S3', target: '/d', url: 'https://s3.example.com/', bucket: 'b', files: ['x.bin'], IAM: iam}],
    }),
  ],
  ['S3 with a bucket only', job({resources: [{type: 'S3', target: '/d', url: 'https://s3.example.com', bucket: 'b'}]})],
  [
    'S3 at a url with files',
    job({resources: [{type: 'S3', target: '/d', url: 'https://s3.example.com/b', files: ['x']}]}),
  ],
  ['HF with files', job({resources: [{type: 'HF', target: '/m', repo: 'org/model', files: ['config.json']}]})],
  [
    'registry credentials',
    job({authentication: {docker: {username: 'u', password: '%%secrets.REG%%', server: 'https://r.io'}}}),
  ],
  [
    'global defaults and logistics',
    {
      version: '0.1',
      type: 'container',
      logistics: {
        send: {type: 'api', args: {endpoint: 'https://e.io/s'}},
        receive: {type: 'api-listen', args: {endpoint: 'https://e.io/r'}},
      },
      global: {image: 'ubuntu', gpu: true, entrypoint: ['/bin/sh'], env: {A: '1'}, work_dir: '/w'},
      ops: [{id: 'run', type: 'container/run', args: {image: 'ubuntu'}}],
    },
  ],
  [
    'meta with strings, numbers, lists and a flat object',
    job({}, {meta: {trigger: 'dashboard', n: 1, tags: ['a', 2], o: {k: 'v', l: [1]}}}),
  ],
  [
    'a create-volume operation beside a run',
    {
      version: '0.1',
      type: 'container',
      ops: [
        {id: 'vol', type: 'container/create-volume', args: {image: 'busybox'}},
        {id: 'run', type: 'container/run', args: {image: 'ubuntu', gpu: true}},
      ],
    },
  ],
]

/** Spec-valid definitions the network refuses, and the member named in the refusal. */
const REFUSED: [string, Json, string][] = [
  [
    'an operation id with a space',
    {version: '0.1', type: 'container', ops: [{id: 'my op', type: 'container/run', args: {image: 'x'}}]},
    'ops[0].id',
  ],
  ['a nested meta value', job({}, {meta: {a: {b: {c: 1}}}}), 'meta.a.b'],
  ['a boolean meta value', job({}, {meta: {flag: true}}), 'meta.flag'],
  ['a null meta value', job({}, {meta: {gone: null}}), 'meta.gone'],
  [
    'a partial IAM',
    job({resources: [{type: 'S3', target: '/d', url: 'https://s3.io', bucket: 'b', IAM: {REGION: 'x'}}]}),
    'ops[0].args.resources[0].IAM',
  ],
  [
    'HF with IAM',
    job({resources: [{type: 'HF', target: '/m', repo: 'o/m', IAM: iam}]}),
    'ops[0].args.resources[0].IAM',
  ],
  [
    'HF with url',
    job({resources: [{type: 'HF', target: '/m', repo: 'o/m', url: 'https://hf.co'}]}),
    'ops[0].args.resources[0].url',
  ],
  ['HF without repo', job({resources: [{type: 'HF', target: '/m'}]}), 'ops[0].args.resources[0]'],
  [
    'S3 with repo',
    job({resources: [{type: 'S3', target: '/d', url: 'https://s3.io', bucket: 'b', repo: 'o/m'}]}),
    'ops[0].args.resources[0].repo',
  ],
  ['S3 without url', job({resources: [{type: 'S3', target: '/d', bucket: 'b'}]}), 'ops[0].args.resources[0]'],
  ['duplicate ports', job({expose: [{port: 80}, {port: 80, type: 'api'}]}), 'ops[0].args.expose[1].port'],
  ['output', job({output: '/out'}), 'ops[0].args.output'],
  [
    'required_vram beside a meta value that is no number',
    {...job({required_vram: 8}), meta: {system_resources: {required_vram: 'lots'}}},
    'meta.system_resources.required_vram',
  ],
]

/** Both official validators' verdicts on a value, with their errors when they refuse. */
function officialVerdicts(value: unknown): {types: unknown; sdk: unknown} {
  const types = typesValidate(value)
  const sdk = sdkValidate(value as never)
  return {types: types.success || types.errors, sdk: sdk.success || sdk.errors}
}

describe('the network form of a definition, judged by the official validators', function () {
  this.timeout(20_000)

  it('posts all 10 templates on every network: translated, then accepted by @nosana/types and @nosana/sdk', async () => {
    const files = readdirSync(TEMPLATES).filter((f) => f.endsWith('.json'))
    assert.equal(files.length, 10)
    for (const file of files) {
      const spec = JSON.parse(readFileSync(join(TEMPLATES, file), 'utf8')) as unknown
      assert.ok(validateJobDefinition(spec).success, `${file} is spec-valid`)
      for (const network of NETWORKS) {
        const prepared = await prepareUpload(spec, network)
        assert.ok(prepared.ok, `${file} on ${network}: ${JSON.stringify(!prepared.ok && prepared.issues)}`)
        const uploaded = JSON.parse(new TextDecoder().decode(prepared.upload.bytes)) as unknown
        assert.deepEqual(officialVerdicts(uploaded), {types: true, sdk: true}, `${file} on ${network}`)
      }
    }
  })

  for (const [name, spec] of ACCEPTED) {
    it(`accepts ${name}: both official validators take the uploaded bytes`, async () => {
      assert.ok(validateJobDefinition(spec).success, 'spec-valid')
      const prepared = await prepareUpload(spec, 'mainnet')
      assert.ok(prepared.ok, JSON.stringify(!prepared.ok && prepared.issues))
      const uploaded = JSON.parse(new TextDecoder().decode(prepared.upload.bytes)) as unknown
      assert.deepEqual(officialVerdicts(uploaded), {types: true, sdk: true})
    })
  }

  for (const [name, spec, member] of REFUSED) {
    it(`refuses ${name} before anything is uploaded, naming ${member}`, async () => {
      assert.ok(validateJobDefinition(spec).success, 'spec-valid')
      for (const network of NETWORKS) {
        const prepared = await prepareUpload(spec, network)
        assert.equal(prepared.ok, false, network)
        if (prepared.ok) continue
        assert.ok(
          prepared.issues.some((i) => i.path === member && i.code === 'no_network_equivalent'),
          JSON.stringify(prepared.issues),
        )
        assert.ok(
          prepared.issues.every((i) => i.message.length > 20),
          'each refusal says why',
        )
      }
    })
  }

  it('refuses every REFUSED case untranslated too: the official validator agrees they are refused', async () => {
    for (const [name, spec] of REFUSED) {
      if (name.startsWith('HF without') || name.startsWith('S3 without')) continue // refused at run time, not by types
      assert.notEqual(typesValidate(spec).success, true, name)
    }
  })

  it('translates the every-member definition (without output) to a form both validators accept', async () => {
    const spec = everyMemberDefinition()
    delete ((spec.ops as Json[])[0]!.args as Json).output
    ;(spec.meta as Json).anything = {else: 'yes'}
    const prepared = await prepareUpload(spec, 'devnet')
    assert.ok(prepared.ok, JSON.stringify(!prepared.ok && prepared.issues))
    const uploaded = prepared.upload.document as Json
    assert.equal('$schema' in uploaded, false)
    assert.deepEqual((uploaded.meta as Json).system_resources, {required_vram: 8, gpu_model: 'A100'})
    const args = (uploaded.ops as Json[])[0]!.args as Json
    assert.equal('required_vram' in args, false)
    const checks = ((args.expose as Json[])[0]!.health_checks as Json[]).map((c) => c.continuous)
    assert.deepEqual(checks, [false, false])
    assert.deepEqual((args.resources as Json[])[0], {
      type: 'S3',
      target: '/data',
      buckets: [{url: 'https://s3.amazonaws.com/b', files: ['a.txt']}],
      IAM: {ACCESS_KEY_ID: '%%secrets.K%%', REGION: 'eu', SECRET_ACCESS_KEY: '%%secrets.S%%'},
    })
    assert.deepEqual(officialVerdicts(JSON.parse(new TextDecoder().decode(prepared.upload.bytes))), {
      types: true,
      sdk: true,
    })
  })

  it("reads a translated job back on the localnet's node as it was written (S3 endpoint, bucket and files)", async () => {
    const spec = everyMemberDefinition()
    delete ((spec.ops as Json[])[0]!.args as Json).output
    ;(spec.meta as Json).anything = {else: 'yes'}
    const prepared = await prepareUpload(spec, 'localnet')
    assert.ok(prepared.ok)
    const local = await runnableOnLocalnet(prepared.upload.document)
    assert.ok(local.ok, JSON.stringify(!local.ok && local.issues))
    const args = local.definition.ops[0]!.args
    assert.deepEqual(args.resources![0], (((spec.ops as Json[])[0]!.args as Json).resources as Json[])[0])
    assert.deepEqual(args.expose, ((spec.ops as Json[])[0]!.args as Json).expose as Json[])
  })

  describe("definitions in the network's newer format", () => {
    const newer = {
      version: '0.1',
      type: 'container',
      global: {variables: {MODEL: 'llama'}},
      ops: [
        {
          id: 'serve',
          type: 'container/run',
          execution: {group: 'main'},
          args: {
            image: 'ollama/ollama',
            private: true,
            expose: [{port: 11434, health_checks: [{...http, continuous: true}]}],
          },
        },
      ],
    }

    it('are refused by the spec, and accepted on devnet and mainnet with a warning per member beyond spec 0.1', async () => {
      assert.equal(validateJobDefinition(newer).success, false)
      assert.deepEqual(officialVerdicts(newer), {types: true, sdk: true})
      for (const network of ['devnet', 'mainnet'] as const) {
        const prepared = await prepareUpload(newer, network)
        assert.ok(prepared.ok, JSON.stringify(!prepared.ok && prepared.issues))
        assert.deepEqual(prepared.upload.document, newer, 'uploaded as written')
        const beyond = prepared.upload.beyondSpec.map((i) => i.path).sort()
        assert.deepEqual(beyond, [
          'global.variables',
          'ops[0].args.expose[0].health_checks[0].continuous',
          'ops[0].args.private',
          'ops[0].execution',
        ])
        assert.ok(prepared.upload.beyondSpec.every((i) => i.code === 'beyond_spec'))
      }
    })

    it("are refused on localnet before paying, naming each member the localnet's node cannot run", async () => {
      const prepared = await prepareUpload(newer, 'localnet')
      assert.equal(prepared.ok, false)
      if (prepared.ok) return
      // Groups, continuous checks and global.variables run on the localnet's node (issue 39); `private` does not.
      assert.deepEqual(
        prepared.issues.map((i) => [i.path, i.code]),
        [['ops[0].args.private', 'localnet_cannot_run']],
      )
      const runnable = {...newer, ops: [{...newer.ops[0]!, args: {...newer.ops[0]!.args, private: undefined}}]}
      const local = await prepareUpload(JSON.parse(JSON.stringify(runnable)) as unknown, 'localnet')
      assert.ok(local.ok, JSON.stringify(!local.ok && local.issues))
    })

    it("a newer-format job the network refuses stays refused, with the spec's and the network's reasons", async () => {
      const broken = {...newer, ops: [{...newer.ops[0], args: {...newer.ops[0]!.args, output: '/o'}}]}
      const prepared = await prepareUpload(broken, 'devnet')
      assert.equal(prepared.ok, false)
      if (prepared.ok) return
      const paths = prepared.issues.map((i) => i.path)
      assert.ok(paths.includes('global.variables'), 'the spec refuses the newer member')
      assert.ok(paths.includes('ops[0].args.output'), 'the network refuses output')
    })
  })
})
