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

    it('hands deployment_id to the node beside the model: it says where the node serves the ports', async () => {
      const local = await onLocalnet(job({expose: 80}, {deployment_id: 'dep-1'}))
      assert.ok(local.ok)
      assert.equal(local.members.deploymentId, 'dep-1')
      const none = await onLocalnet(job({expose: 80}))
      assert.ok(none.ok)
      assert.equal(none.members.deploymentId, undefined)
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
    const ONE_EACH = 'write each location as `url: "<endpoint>/<bucket>"` with its `files`'
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

    it('runs several S3 locations of one resource: each further one last, with the same target', async () => {
      const buckets = [{url: 'https://s3.example.com/a', files: ['x']}, {url: 'https://s3.example.com/b'}]
      const definition = await runs(
        job({
          resources: [
            {type: 'S3', target: '/d', buckets, IAM: {REGION: 'r', ACCESS_KEY_ID: 'k', SECRET_ACCESS_KEY: 's'}},
            {type: 'HF', target: '/m', repo: 'org/model'},
          ],
        }),
      )
      const IAM = {REGION: 'r', ACCESS_KEY_ID: 'k', SECRET_ACCESS_KEY: 's'}
      assert.deepEqual((definition.ops as {args: Json}[])[0]!.args.resources, [
        {type: 'S3', target: '/d', url: 'https://s3.example.com', bucket: 'a', files: ['x'], IAM},
        {type: 'HF', target: '/m', repo: 'org/model'},
        {type: 'S3', target: '/d', url: 'https://s3.example.com', bucket: 'b', IAM},
      ])
    })

    it('refuses a location of several S3 buckets that names no bucket, at that location', async () => {
      const buckets = [{url: 'https://s3.example.com/a'}, {url: 'https://s3.example.com'}]
      assert.deepEqual(await cannotRun(job({resources: [{type: 'S3', target: '/d', buckets}]})), [
        {
          path: 'ops[0].args.resources[0].buckets[1]',
          pointer: '/ops/0/args/resources/0/buckets/1',
          code: 'localnet_cannot_run',
          message: NO_BUCKET,
          hint: ONE_EACH,
        },
      ])
    })

    it('refuses an S3 location that names no bucket: a bare endpoint, no location, no URL, no path', async () => {
      const resources = [
        {type: 'S3', target: '/a', url: 'https://s3.example.com'},
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
      const issues = (await cannotRun(job({aliases: ['db']}))) as {path: string; code: string; message: string}[]
      assert.deepEqual(
        issues.map((i) => [i.path, i.code, (i as {hint?: string}).hint]),
        [['ops[0].args.aliases', 'localnet_cannot_run', hint]],
      )
      assert.match(issues[0]!.message, /^the localnet's node cannot run it: unknown field `aliases`/)
    })

    it('points past volume operations at the member as written', async () => {
      const document = {
        version: '0.1',
        type: 'container',
        ops: [
          {id: 'vol', type: 'container/create-volume', args: {name: 'v'}},
          {id: 'run', type: 'container/run', args: {image: 'ubuntu', private: true}},
        ],
      } as NetworkDefinition
      const issues = (await cannotRun(document)) as {path: string; pointer: string}[]
      assert.deepEqual(
        issues.map((i) => [i.path, i.pointer]),
        [['ops[1].args.private', '/ops/1/args/private']],
      )
    })

    it('runs one exposed port written as an object, as a list of one', async () => {
      const model = await runs(job({expose: {port: 80, health_checks: [{...http, continuous: false}]}}))
      assert.deepEqual((model.ops as Json[])[0]!.args, {image: 'ubuntu', expose: [{port: 80, health_checks: [http]}]})
    })
  })

  describe("the members that say how the localnet's node runs it", () => {
    async function members(document: NetworkDefinition) {
      const local = await onLocalnet(document)
      assert.ok(local.ok, JSON.stringify(!local.ok && local.issues))
      return local
    }
    const two = (a: Json, b: Json, extra: Json = {}) =>
      ({
        version: '0.1',
        type: 'container',
        ...extra,
        ops: [
          {id: 'a', type: 'container/run', args: {image: 'ubuntu'}, ...a},
          {id: 'b', type: 'container/run', args: {image: 'ubuntu'}, ...b},
        ],
      }) as NetworkDefinition

    it('takes continuous checks, restart_policy, results, volumes and global.variables apart from the spec model', async () => {
      const document = {
        version: '0.1',
        type: 'container',
        global: {variables: {MODEL: 'm1'}},
        ops: [
          {id: 'vol', type: 'container/create-volume', args: {name: 'cache'}, execution: {group: 'g'}},
          {
            id: 'run',
            type: 'container/run',
            args: {
              image: 'ubuntu',
              cmd: 'serve %%global.variables.MODEL%%',
              restart_policy: {policy: 'on-failure', restart_tries: 2},
              volumes: [{name: 'cache', dest: '/cache'}],
              expose: [
                {
                  port: 80,
                  health_checks: [
                    {...http, continuous: true},
                    {...http, continuous: false},
                  ],
                },
              ],
            },
            results: {score: 'score=(\\d+)', err: {regex: 'E.*', logType: ['stderr']}},
            execution: {group: 'g', depends_on: ['vol']},
          },
        ],
      } as NetworkDefinition
      const local = await members(document)
      assert.deepEqual(local.definition, {
        version: '0.1',
        type: 'container',
        ops: [
          {
            id: 'run',
            type: 'container/run',
            args: {
              image: 'ubuntu',
              cmd: 'serve %%global.variables.MODEL%%',
              expose: [{port: 80, health_checks: [http, http]}],
            },
          },
        ],
      })
      assert.deepEqual(local.members.variables, {MODEL: 'm1'})
      const [vol, run] = local.members.ops
      assert.deepEqual(
        {...vol!, continuous: [...vol!.continuous]},
        {
          id: 'vol',
          createsVolume: 'cache',
          group: 'g',
          grouped: true,
          dependsOn: [],
          stopIfDependentStops: false,
          restart: {policy: 'no'},
          volumes: [],
          continuous: [],
        },
      )
      assert.deepEqual(
        {...run!, continuous: [...run!.continuous]},
        {
          id: 'run',
          group: 'g',
          grouped: true,
          dependsOn: ['vol'],
          stopIfDependentStops: false,
          restart: {policy: 'on-failure', tries: 2},
          results: {score: {regex: 'score=(\\d+)'}, err: {regex: 'E.*', logType: ['stderr']}},
          volumes: [{name: 'cache', dest: '/cache'}],
          continuous: [[80, [true, false]]],
        },
      )
    })

    it('reads every restart_policy the network has; restart_tries 0 restarts without end, as the node passes it on', async () => {
      const policies: [unknown, unknown][] = [
        ['no', {policy: 'no'}],
        ['always', {policy: 'always'}],
        ['unless-stopped', {policy: 'unless-stopped'}],
        ['on-failure', {policy: 'on-failure'}],
        [
          {policy: 'on-failure', restart_tries: 3},
          {policy: 'on-failure', tries: 3},
        ],
        [{policy: 'on-failure', restart_tries: 0}, {policy: 'on-failure'}],
      ]
      for (const [written, rule] of policies) {
        const local = await members(job({restart_policy: written}))
        assert.deepEqual(local.members.ops[0]!.restart, rule, JSON.stringify(written))
      }
    })

    it('refuses a dependency on an unknown operation or on itself, naming the ids', async () => {
      const issues = await cannotRun(two({execution: {depends_on: ['nope', 'a']}}, {}))
      assert.deepEqual(issues, [
        {
          path: 'ops[0].execution.depends_on[0]',
          pointer: '/ops/0/execution/depends_on/0',
          code: 'invalid_value',
          message: 'names `nope`, which is no operation of this job',
          hint: 'name an operation that starts before it',
        },
        {
          path: 'ops[0].execution.depends_on[1]',
          pointer: '/ops/0/execution/depends_on/1',
          code: 'invalid_value',
          message: 'names `a` itself: an operation cannot wait for itself',
          hint: 'name an operation that starts before it',
        },
      ])
    })

    it('refuses a depends_on cycle, naming its ids in order', async () => {
      const issues = await cannotRun(
        two({execution: {group: 'g', depends_on: ['b']}}, {execution: {group: 'g', depends_on: ['a']}}),
      )
      assert.deepEqual(issues, [
        {
          path: 'ops[0].execution.depends_on',
          pointer: '/ops/0/execution/depends_on',
          code: 'invalid_value',
          message: '`depends_on` goes round in a cycle (a -> b -> a): none of them would ever start',
          hint: 'remove one dependency of the cycle',
        },
      ])
    })

    it('refuses a dependency across groups (the network fails it) and one on a later group (never started)', async () => {
      const across = await cannotRun(two({execution: {group: 'g'}}, {execution: {group: 'h', depends_on: ['a']}}))
      assert.deepEqual(
        across.map((i) => (i as {message: string}).message),
        ["names `a` of group `g`, and `b` is in group `h`: the network's nodes fail a dependency across groups"],
      )
      const later = await cannotRun(two({execution: {depends_on: ['b']}}, {}))
      assert.deepEqual(
        later.map((i) => (i as {message: string}).message),
        ['names `b`, which runs in a later group: `a` would never start'],
      )
      // Ungrouped, on an earlier operation: it starts once that one's group has run.
      await members(two({}, {execution: {depends_on: ['a'], stop_if_dependent_stops: true}}))
    })

    it('refuses a literal the node would not resolve: an unknown variable, or one only the network has', async () => {
      const issues = await cannotRun(
        job({cmd: 'echo %%global.variables.NOPE%% %%ops.x.host%% %%global.job%%'}, {global: {variables: {A: 'b'}}}),
      )
      assert.deepEqual(
        issues.map((i) => [(i as {code: string}).code, (i as {message: string}).message]),
        [
          [
            'invalid_value',
            "%%global.variables.NOPE%% names a variable `global.variables` does not have: the network's nodes fail the operation",
          ],
          [
            'localnet_cannot_run',
            "the localnet's node does not resolve %%ops.x.host%% (it resolves %%global.job%%, %%global.project%%, %%global.host%% and %%global.variables.NAME%%)",
          ],
        ],
      )
    })
  })
})
