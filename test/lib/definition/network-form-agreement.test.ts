/**
 * The localnet's reader and the network's validator agree (issue 39): on definitions generated with a fixed seed
 * that use the network's newer members (execution, restart_policy, continuous checks, results, volumes,
 * global.variables and its literals), every one the validator accepts is runnable on the localnet or refused with
 * named reasons, and every one it refuses the localnet's node refuses too. What the reader runs keeps the network's
 * meaning: each operation's group, dependencies, restart rule and continuous checks, and `global` as the node
 * applies it. Checked by the reader, without running anything.
 */
import {strict as assert} from 'node:assert'

import fc from 'fast-check'

import {fromPointer, valueAt} from '../../../src/lib/definition/paths.js'
import {readNetworkDefinition, runnableOnLocalnet} from '../../../src/lib/definition/network-form/read.js'
import type {NetworkDefinition} from '../../../src/lib/definition/network-form/types.js'
import {planSteps} from '../../../src/lib/node/operation-plan.js'

type Json = Record<string, unknown>

const IDS = ['a', 'b', 'c', 'd']
const GROUPS = ['g', 'h']
const http = {type: 'http', path: '/', method: 'GET', expected_status: 200}

/** Sometimes a value the network's types refuse, so both verdicts come up. */
const restartArb = fc.oneof(
  {weight: 8, arbitrary: fc.constantFrom('no', 'always', 'unless-stopped', 'on-failure')},
  {weight: 4, arbitrary: fc.record({policy: fc.constant('on-failure'), restart_tries: fc.integer({min: 0, max: 4})})},
  {weight: 2, arbitrary: fc.record({policy: fc.constant('on-failure')})},
  {weight: 1, arbitrary: fc.constantFrom('sometimes', {policy: 'always'}, 3)},
)

const executionArb = fc.oneof(
  {weight: 6, arbitrary: fc.record({group: fc.constantFrom(...GROUPS)}, {requiredKeys: []})},
  {
    weight: 6,
    arbitrary: fc.record(
      {
        group: fc.constantFrom(...GROUPS),
        depends_on: fc.uniqueArray(fc.constantFrom(...IDS, 'x'), {maxLength: 2}),
        stop_if_dependent_stops: fc.boolean(),
      },
      {requiredKeys: ['depends_on']},
    ),
  },
  // Refused by the network's types: stop_if_dependent_stops needs depends_on.
  {weight: 1, arbitrary: fc.constant({stop_if_dependent_stops: true})},
)

const checkArb = fc.oneof(
  {weight: 12, arbitrary: fc.boolean().map((continuous) => ({...http, continuous}))},
  // The network's types require `continuous`.
  {weight: 1, arbitrary: fc.constant(http)},
)

const exposeArb = fc.oneof(
  fc.constant(undefined),
  fc.integer({min: 1000, max: 1010}),
  fc.array(fc.record({port: fc.integer({min: 1000, max: 1003}), health_checks: fc.array(checkArb, {maxLength: 2})}), {
    minLength: 1,
    maxLength: 2,
  }),
)

const resultsArb = fc.oneof(
  fc.constant(undefined),
  fc.dictionary(
    fc.constantFrom('score', 'url'),
    fc.oneof(
      fc.constantFrom('score=(\\d+)', '*', 'https?://\\S+'),
      fc.record({regex: fc.constant('E.*'), logType: fc.constantFrom(['stderr'], ['stdout', 'stderr'], ['stdout'])}),
    ),
  ),
)

const cmdArb = fc.constantFrom(
  'echo hi',
  'echo %%global.variables.MODEL%%',
  'echo %%global.variables.NOPE%%',
  'echo %%global.job%% %%global.host%%',
  'echo %%ops.a.host%%',
  ['/bin/sh', '-c', 'echo hi'],
)

const runArb = fc.record(
  {
    image: fc.constant('ubuntu'),
    cmd: cmdArb,
    gpu: fc.boolean(),
    work_dir: fc.constantFrom('', '/w'),
    restart_policy: restartArb,
    expose: exposeArb,
    volumes: fc.array(fc.record({name: fc.constantFrom('v', 'w'), dest: fc.constant('/data')}), {maxLength: 1}),
  },
  {requiredKeys: ['image']},
)

const opArb = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record(
      {type: fc.constant('container/run'), args: runArb, execution: executionArb, results: resultsArb},
      {requiredKeys: ['type', 'args']},
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        type: fc.constant('container/create-volume'),
        args: fc.record({name: fc.constantFrom('v', 'w')}),
        execution: executionArb,
      },
      {requiredKeys: ['type', 'args']},
    ),
  },
)

/** Operations of one group that depend on each other: the cycles and orders a group can hold. */
const oneGroupArb = fc.array(fc.uniqueArray(fc.constantFrom(...IDS), {maxLength: 2}), {minLength: 2, maxLength: 4}).map(
  (deps) =>
    ({
      version: '0.1',
      type: 'container',
      ops: deps.map((depends_on, i) => ({
        id: IDS[i],
        type: 'container/run',
        args: {image: 'ubuntu', cmd: 'echo hi'},
        execution: depends_on.length > 0 ? {group: 'g', depends_on} : {group: 'g'},
      })),
    }) as NetworkDefinition,
)

const mixedArb = fc
  .record(
    {
      ops: fc.array(opArb, {minLength: 1, maxLength: 4}),
      global: fc.record(
        {
          gpu: fc.boolean(),
          work_dir: fc.constant('/g'),
          env: fc.constant({A: '1'}),
          variables: fc.constant({MODEL: 'm'}),
        },
        {requiredKeys: []},
      ),
    },
    {requiredKeys: ['ops']},
  )
  .map(({ops, global}) => {
    const document: Json = {
      version: '0.1',
      type: 'container',
      ops: ops.map((op, i) => dropUndefined({id: IDS[i], ...op})),
    }
    if (global) document.global = global
    return document as NetworkDefinition
  })

const definitionArb = fc.oneof({weight: 3, arbitrary: mixedArb}, {weight: 1, arbitrary: oneGroupArb})

function dropUndefined(value: Json): Json {
  const out: Json = {}
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue
    out[k] = v !== null && typeof v === 'object' && !Array.isArray(v) ? dropUndefined(v as Json) : v
  }
  return out
}

/**
 * The network's node on a definition's `execution`, written from its TaskManager for this test: the ids it refuses
 * (unknown, itself, across groups) and the operations it would never start (a cycle, a dependency on a later group).
 */
function executionRefused(document: NetworkDefinition): boolean {
  const ops = document.ops.map((op) => {
    const execution = (op.execution ?? {}) as {group?: string; depends_on?: string[]}
    return {id: op.id, explicit: execution.group, group: execution.group ?? op.id, deps: execution.depends_on ?? []}
  })
  const byId = new Map(ops.map((op) => [op.id, op]))
  const groups = [...new Set(ops.map((op) => op.group))]
  for (const op of ops) {
    for (const dep of op.deps) {
      const target = byId.get(dep)
      if (!target || dep === op.id || target.explicit !== op.explicit) return true
      if (groups.indexOf(target.group) > groups.indexOf(op.group)) return true
    }
  }
  // A cycle: some operations wait on each other forever.
  const started = new Set<string>()
  let progress = true
  while (progress) {
    progress = false
    for (const op of ops) {
      if (!started.has(op.id) && op.deps.every((dep) => started.has(dep))) {
        started.add(op.id)
        progress = true
      }
    }
  }
  return started.size < ops.length
}

describe("the localnet's reader and the network's validator agree", () => {
  it('on 400 generated definitions with the newer members (fixed seed), without running them', async () => {
    const tally = {networkRefused: 0, localnetRefused: 0, runnable: 0}
    await fc.assert(
      fc.asyncProperty(definitionArb, async (document) => {
        const read = readNetworkDefinition(document)
        if (!read.ok) {
          tally.networkRefused++
          // Every refusal is named: a path into the definition and the validator's words.
          for (const issue of read.issues) {
            assert.equal(issue.code, 'network_refused')
            assert.ok(issue.message.length > 0)
          }
          return
        }
        const local = await runnableOnLocalnet(read.document)
        const refusedExecution = executionRefused(document)
        if (!local.ok) {
          tally.localnetRefused++
          for (const issue of local.issues) {
            assert.ok(['localnet_cannot_run', 'invalid_value'].includes(issue.code), JSON.stringify(issue))
            assert.ok(issue.message.length > 0)
            // Named: the path leads to a member of the definition.
            const segments = fromPointer(issue.pointer)
            assert.notEqual(valueAt(document, segments), undefined, `${issue.path} is in the definition`)
          }
          const onExecution = local.issues.some((i) => i.path.includes('.execution'))
          assert.equal(onExecution, refusedExecution, JSON.stringify({document, issues: local.issues}))
          return
        }
        tally.runnable++
        assert.equal(refusedExecution, false, JSON.stringify(document))
        // The network's meaning, kept: every operation in order with its group, dependencies and restart rule.
        const steps = planSteps(local.definition, local.members)
        assert.deepEqual(
          steps.map((s) => s.id),
          document.ops.map((op) => op.id),
        )
        const global = (document.global ?? {}) as {gpu?: boolean; work_dir?: string}
        for (const [i, step] of steps.entries()) {
          const op = document.ops[i]!
          const execution = (op.execution ?? {}) as {group?: string; depends_on?: string[]}
          assert.equal(step.execution.group, execution.group ?? op.id)
          assert.deepEqual(step.execution.dependsOn, execution.depends_on ?? [])
          if (step.type === 'container/create-volume') continue
          const args = op.args as {restart_policy?: unknown; gpu?: boolean; work_dir?: string; expose?: unknown}
          assert.deepEqual(step.execution.restart, expectedRestart(args.restart_policy))
          assert.equal(step.gpu, Boolean(args.gpu || global.gpu))
          assert.equal(step.workDir, args.work_dir || global.work_dir)
          const written = Array.isArray(args.expose) ? (args.expose as {port: number; health_checks: Json[]}[]) : []
          for (const port of step.expose) {
            const flags = written.find((p) => p.port === port.port)?.health_checks.map((c) => c.continuous === true)
            assert.deepEqual(port.continuous, flags ?? [])
          }
        }
      }),
      {seed: 39, numRuns: 400},
    )
    // Every verdict came up often enough for the agreement to mean something.
    assert.ok(tally.runnable >= 30, JSON.stringify(tally))
    assert.ok(tally.localnetRefused >= 30, JSON.stringify(tally))
    assert.ok(tally.networkRefused >= 30, JSON.stringify(tally))
    process.stderr.write(`      (${JSON.stringify(tally)})\n`)
  })
})

/** The restart rule the network's node hands its container engine (createPodmanRunOptions). */
function expectedRestart(policy: unknown): unknown {
  if (policy === undefined || policy === 'no') return {policy: 'no'}
  if (typeof policy === 'string') return {policy}
  const tries = (policy as {restart_tries?: number}).restart_tries
  return tries ? {policy: 'on-failure', tries} : {policy: 'on-failure'}
}
