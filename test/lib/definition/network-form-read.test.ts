/**
 * Reading a definition in the network's form (network-form/read.ts): the network's own validator's verdict in
 * gpunet's words, and what the localnet's node runs of an accepted definition, or every member it cannot run.
 */
import {strict as assert} from 'node:assert'

import {NOSANA_TYPES_VERSION} from '../../../src/lib/definition/network-form/nosana-validator.generated.js'
import {
  type LocalnetRead,
  NETWORK_VALIDATOR,
  readNetworkDefinition,
  runnableOnLocalnet,
} from '../../../src/lib/definition/network-form/read.js'
import type {NetworkDefinition} from '../../../src/lib/definition/network-form/types.js'
import {oneOpDefinition, HTTP_HEALTH_CHECK} from '../../helpers/definitions.js'

type Json = Record<string, unknown>

const VALIDATOR = `@nosana/types ${NOSANA_TYPES_VERSION}`
const job = (args: Json, extra: Json = {}) => oneOpDefinition(args, extra) as NetworkDefinition
const http = HTTP_HEALTH_CHECK
const refusal = (path: string, pointer: string, message: string) => ({
  path,
  pointer,
  code: 'network_refused',
  message,
})

/** The network's validator takes `document`: what the localnet's node makes of it. */
async function onLocalnet(document: NetworkDefinition): Promise<LocalnetRead> {
  const read = readNetworkDefinition(document)
  assert.ok(read.ok, JSON.stringify(!read.ok && read.issues))
  return runnableOnLocalnet(read.document)
}

async function runs(document: NetworkDefinition): Promise<Json> {
  const local = await onLocalnet(document)
  assert.ok(local.ok, JSON.stringify(!local.ok && local.issues))
  return local.definition as unknown as Json
}

async function cannotRun(document: NetworkDefinition): Promise<unknown[]> {
  const local = await onLocalnet(document)
  assert.equal(local.ok, false, JSON.stringify(local))
  return local.ok ? [] : local.issues
}

describe("reading a definition in the network's form", () => {
  describe("the network's validator", () => {
    it('is named with the version of @nosana/types gpunet bundles', () => {
      assert.equal(NETWORK_VALIDATOR, VALIDATOR)
      assert.match(NETWORK_VALIDATOR, /^@nosana\/types \d+\.\d+\.\d+$/)
    })

    it('accepts a definition as it is, the very value given', () => {
      const document = job({expose: [{port: 80, health_checks: [{...http, continuous: true}]}]})
      const read = readNetworkDefinition(document)
      assert.ok(read.ok)
      assert.equal(read.document, document)
    })

    it('refuses a missing member as required, with what it expected', () => {
      assert.deepEqual(readNetworkDefinition({version: '0.1', type: 'container'}), {
        ok: false,
        issues: [refusal('ops', '/ops', `is required by ${VALIDATOR} (expected (Ops & UniqueById))`)],
      })
    })

    it("refuses a member it does not know: the network's nodes fail a job that has it", () => {
      assert.deepEqual(readNetworkDefinition(job({output: '/out'})), {
        ok: false,
        issues: [
          refusal(
            'ops[0].args.output',
            '/ops/0/args/output',
            `is not a member ${VALIDATOR} knows: the network's nodes fail a job that has it`,
          ),
        ],
      })
    })

    it('refuses a value of the wrong type with what it expected', () => {
      assert.deepEqual(readNetworkDefinition(job({image: 5})), {
        ok: false,
        issues: [refusal('ops[0].args.image', '/ops/0/args/image', `is refused by ${VALIDATOR}: expected string`)],
      })
    })

    it('names the member at any index and under any key: ops[11], env["a-b"], env["a\\"b"], env["a.b"]', () => {
      const ops = Array.from({length: 12}, (_, i) => ({id: `op${i}`, type: 'container/run', args: {image: 'x'}}))
      ops[11]!.args.image = 3 as unknown as string
      assert.deepEqual(readNetworkDefinition({version: '0.1', type: 'container', ops}), {
        ok: false,
        issues: [refusal('ops[11].args.image', '/ops/11/args/image', `is refused by ${VALIDATOR}: expected string`)],
      })
      const read = readNetworkDefinition(job({env: {'a-b': 1, 'a"b': 2, 'a.b': 3, ok: 'x'}}))
      assert.equal(read.ok, false)
      assert.deepEqual(!read.ok && read.issues.map((i) => [i.path, i.pointer]), [
        ['ops[0].args.env["a-b"]', '/ops/0/args/env/a-b'],
        ['ops[0].args.env["a\\"b"]', '/ops/0/args/env/a"b'],
        ['ops[0].args.env["a.b"]', '/ops/0/args/env/a.b'],
      ])
    })

    it('names the definition itself when it is no object', () => {
      const read = readNetworkDefinition('a job')
      assert.equal(read.ok, false)
      assert.deepEqual(!read.ok && read.issues.map((i) => [i.path, i.pointer]), [['', '']])
    })
  })

  describe("what the localnet's node runs", () => {
    it('the spec model back: health checks lose `continuous: false`; deployment_id and a foreign trigger go', async () => {
      const document = job(
        {expose: [{port: 80, health_checks: [{...http, continuous: false}]}, {port: 81}]},
        {deployment_id: 'dep-1', meta: {trigger: 'api', n: 1}},
      )
      const before = structuredClone(document)
      assert.deepEqual(await runs(document), {
        version: '0.1',
        type: 'container',
        meta: {n: 1},
        ops: [
          {
            id: 'run',
            type: 'container/run',
            args: {image: 'ubuntu', expose: [{port: 80, health_checks: [http]}, {port: 81}]},
          },
        ],
      })
      assert.deepEqual(document, before, 'the document given is left as it was')
    })

    for (const trigger of ['cli', 'dashboard']) {
      it(`keeps the spec's trigger ${trigger}`, async () => {
        assert.deepEqual((await runs(job({}, {meta: {trigger}}))).meta, {trigger})
      })
    }

    it('an S3 location <endpoint>/<bucket> as the spec endpoint and bucket, files kept, the bucket decoded', async () => {
      const definition = await runs(
        job({
          resources: [
            {type: 'S3', target: '/a', url: 'https://s3.example.com/prefix/my-bucket//', files: ['a']},
            {type: 'S3', target: '/b', buckets: [{url: 'https://s3.example.com/my%20bucket', files: ['x']}]},
            {type: 'S3', target: '/c', buckets: [{url: 'https://s3.example.com/logs/'}]},
            {type: 'HF', target: '/m', repo: 'org/model'},
          ],
        }),
      )
      assert.deepEqual((definition.ops as {args: Json}[])[0]!.args.resources, [
        {type: 'S3', target: '/a', url: 'https://s3.example.com/prefix', bucket: 'my-bucket', files: ['a']},
        {type: 'S3', target: '/b', url: 'https://s3.example.com', bucket: 'my bucket', files: ['x']},
        {type: 'S3', target: '/c', url: 'https://s3.example.com', bucket: 'logs'},
        {type: 'HF', target: '/m', repo: 'org/model'},
      ])
    })

    const resource = (r: number) => ({
      path: `ops[0].args.resources[${r}]`,
      pointer: `/ops/0/args/resources/${r}`,
      code: 'localnet_cannot_run',
    })
    const ONE_EACH = 'give each location its own resource, as `url: "<endpoint>/<bucket>"` with its `files`'
    const NO_BUCKET = "the localnet's node reads S3 at `<endpoint>/<bucket>`, and this location names no bucket"

    it("refuses the network's `bucket` beside `url`, a meaning it does not copy", async () => {
      assert.deepEqual(
        await cannotRun(job({resources: [{type: 'S3', target: '/d', url: 'https://s3.example.com', bucket: 'b'}]})),
        [
          {
            path: 'ops[0].args.resources[0].bucket',
            pointer: '/ops/0/args/resources/0/bucket',
            code: 'localnet_cannot_run',
            message:
              "the network's nodes hand `bucket` beside `url` to their S3 helper, a meaning the localnet's node does not copy",
            hint: 'write the location as `buckets: [{url: "<endpoint>/<bucket>", files}]`, or as a spec 0.1 resource',
          },
        ],
      )
    })

    it('refuses several S3 locations in one resource, even beside a url of its own', async () => {
      const buckets = [{url: 'https://s3.example.com/a'}, {url: 'https://s3.example.com/b'}]
      const message = "the localnet's node loads one S3 location per resource"
      assert.deepEqual(
        await cannotRun(
          job({
            resources: [
              {type: 'S3', target: '/d', buckets},
              {type: 'S3', target: '/e', url: 'https://s3.example.com/other', buckets},
            ],
          }),
        ),
        [
          {...resource(0), message, hint: ONE_EACH},
          {...resource(1), message, hint: ONE_EACH},
        ],
      )
    })

    it('refuses an S3 location that names no bucket: a bare endpoint, no location, no URL, no path', async () => {
      const resources = [
        {type: 'S3', target: '/a', buckets: [{url: 'https://s3.example.com'}]},
        {type: 'S3', target: '/b', url: 'https://s3.example.com///', files: ['x']},
        {type: 'S3', target: '/c', buckets: []},
        {type: 'S3', target: '/d', url: 'not a url'},
        {type: 'S3', target: '/e', url: 's3:bucket'},
      ]
      assert.deepEqual(
        await cannotRun(job({resources})),
        resources.map((_, r) => ({...resource(r), message: NO_BUCKET, hint: ONE_EACH})),
      )
    })

    it('refuses S3 in a second operation at that operation', async () => {
      const document = job({})
      document.ops.push({
        id: 'two',
        type: 'container/run',
        args: {image: 'x', resources: [{type: 'S3', target: '/d', url: 'https://s3.example.com'}]},
      })
      assert.deepEqual(await cannotRun(document), [
        {
          path: 'ops[1].args.resources[0]',
          pointer: '/ops/1/args/resources/0',
          code: 'localnet_cannot_run',
          message: NO_BUCKET,
          hint: ONE_EACH,
        },
      ])
    })

    it('refuses what spec 0.1 does not describe, in its words, pointing to devnet and mainnet', async () => {
      const hint = "it runs what spec 0.1 describes; post it to devnet or mainnet, where the network's nodes take it"
      assert.deepEqual(
        await cannotRun(
          job({expose: [{port: 80, health_checks: [{...http, continuous: true}]}]}, {global: {variables: {A: 'b'}}}),
        ),
        [
          {
            path: 'global.variables',
            pointer: '/global/variables',
            code: 'localnet_cannot_run',
            message:
              "the localnet's node cannot run it: unknown field `variables`; allowed fields are `image`, `gpu`, `entrypoint`, `env`, `work_dir`",
            hint,
          },
          {
            path: 'ops[0].args.expose[0].health_checks[0].continuous',
            pointer: '/ops/0/args/expose/0/health_checks/0/continuous',
            code: 'localnet_cannot_run',
            message:
              "the localnet's node cannot run it: unknown field `continuous`; allowed fields are `type`, `path`, `method`, `expected_status`, `headers`, `body`",
            hint,
          },
        ],
      )
    })

    it('refuses a single exposed port object, which spec 0.1 does not describe', async () => {
      const issues = await cannotRun(job({expose: {port: 80, health_checks: [{...http, continuous: false}]}}))
      assert.deepEqual(issues, [
        {
          path: 'ops[0].args.expose',
          pointer: '/ops/0/args/expose',
          code: 'localnet_cannot_run',
          message:
            "the localnet's node cannot run it: `expose` must be a port number or an array of exposed ports, got an object",
          hint: "it runs what spec 0.1 describes; post it to devnet or mainnet, where the network's nodes take it",
        },
      ])
    })
  })
})
