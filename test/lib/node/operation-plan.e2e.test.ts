import {strict as assert} from 'node:assert'
import {execFileSync} from 'node:child_process'

import type {JobDefinition, OperationArgs} from '../../../src/lib/definition/schema.js'
import {validateJobDefinition} from '../../../src/lib/definition/validate.js'
import {isGpunetError} from '../../../src/lib/errors.js'
import {
  commandArgv,
  type OperationPlan,
  planOperations,
  shellArgv,
  substituteSecrets,
} from '../../../src/lib/node/operation-plan.js'

function definition(args: Partial<OperationArgs>, global?: JobDefinition['global']): JobDefinition {
  const value = {
    version: '0.1',
    type: 'container',
    ...(global ? {global} : {}),
    ops: [{id: 'op', type: 'container/run', args: {image: 'docker.io/library/ubuntu', ...args}}],
  }
  const checked = validateJobDefinition(value)
  assert.ok(checked.success, JSON.stringify(checked.errors))
  return checked.data as JobDefinition
}

const planOf = (args: Partial<OperationArgs>, global?: JobDefinition['global']): OperationPlan =>
  planOperations(definition(args, global))[0] as OperationPlan

describe('planOperations', () => {
  const cases: [string, Partial<OperationArgs>, JobDefinition['global'] | undefined, Partial<OperationPlan>][] = [
    ['no cmd: the image default', {}, undefined, {command: {kind: 'exec', argv: []}}],
    [
      'a string cmd is a shell script',
      {cmd: 'echo $HOME'},
      undefined,
      {command: {kind: 'shell', script: 'echo $HOME'}},
    ],
    [
      'an array cmd is passed as given',
      {cmd: ['a b', '-c']},
      undefined,
      {command: {kind: 'exec', argv: ['a b', '-c']}},
    ],
    ['an empty array cmd is the image default', {cmd: []}, undefined, {command: {kind: 'exec', argv: []}}],
    ['a string entrypoint is one word', {entrypoint: '/bin/my tool'}, undefined, {entrypoint: ['/bin/my tool']}],
    ['an array entrypoint is kept', {entrypoint: ['/bin/sh', '-c']}, undefined, {entrypoint: ['/bin/sh', '-c']}],
    ['an empty entrypoint clears the image one', {entrypoint: []}, {entrypoint: 'x'}, {entrypoint: []}],
    ['global entrypoint applies', {}, {entrypoint: ['/init']}, {entrypoint: ['/init']}],
    ['no entrypoint anywhere', {}, undefined, {entrypoint: undefined}],
    [
      'env maps merge, op keys win',
      {env: {A: 'op', C: 'c'}},
      {env: {A: 'g', B: 'b'}},
      {env: {A: 'op', B: 'b', C: 'c'}},
    ],
    ['global work_dir applies', {}, {work_dir: '/w'}, {workDir: '/w'}],
    ['op work_dir wins', {work_dir: '/op'}, {work_dir: '/w'}, {workDir: '/op'}],
    ['gpu defaults to false', {}, undefined, {gpu: false}],
    ['global gpu applies', {}, {gpu: true}, {gpu: true}],
    // As the network's nodes apply `global`: a GPU when either asks; its own entrypoint or work_dir unless empty.
    ['op gpu false does not turn off global true', {gpu: false}, {gpu: true}, {gpu: true}],
    ['op gpu true wins over global false', {gpu: true}, {gpu: false}, {gpu: true}],
    ['an empty op work_dir takes the global one', {work_dir: ''}, {work_dir: '/w'}, {workDir: '/w'}],
    [
      'an empty op entrypoint string takes the global one',
      {entrypoint: ''},
      {entrypoint: ['/g']},
      {entrypoint: ['/g']},
    ],
    [
      'an empty op entrypoint list is kept: it clears the image one',
      {entrypoint: []},
      {entrypoint: ['/g']},
      {entrypoint: []},
    ],
    ['op image wins over global image', {image: 'a'}, {image: 'b'}, {image: 'a'}],
    ['no expose: no ports', {}, undefined, {expose: []}],
    [
      'a number expose is one web port',
      {expose: 8080},
      undefined,
      {expose: [{port: 8080, type: 'web', health_checks: []}]},
    ],
    [
      'exposed ports keep type and checks',
      {
        expose: [
          {port: 1, type: 'websocket', health_checks: [{type: 'websocket', expected_response: 'hi'}]},
          {port: 2},
        ],
      },
      undefined,
      {
        expose: [
          {port: 1, type: 'websocket', health_checks: [{type: 'websocket', expected_response: 'hi'}]},
          {port: 2, type: 'web', health_checks: []},
        ],
      },
    ],
    [
      'resources and authentication are kept for the caller',
      {resources: [{type: 'HF', target: '/m', repo: 'r'}], authentication: {docker: {username: 'u', password: 'p'}}},
      undefined,
      {resources: [{type: 'HF', target: '/m', repo: 'r'}], authentication: {docker: {username: 'u', password: 'p'}}},
    ],
  ]
  for (const [name, args, global, expected] of cases) {
    it(name, () => {
      const plan = planOf(args, global)
      for (const [key, value] of Object.entries(expected)) {
        assert.deepEqual(plan[key as keyof OperationPlan], value, key)
      }
    })
  }

  it('keeps the order and ids of the operations', () => {
    const value = definition({})
    value.ops.push({id: 'second', type: 'container/create-volume', args: {image: 'v'}})
    assert.deepEqual(
      planOperations(value).map((p) => [p.id, p.type]),
      [
        ['op', 'container/run'],
        ['second', 'container/create-volume'],
      ],
    )
  })
})

describe('commandArgv and shellArgv', () => {
  it('passes word lists as given', () => {
    assert.deepEqual(commandArgv({kind: 'exec', argv: ['x', 'y z']}), ['x', 'y z'])
    assert.deepEqual(commandArgv({kind: 'exec', argv: []}), [])
  })

  it('runs a script with bash when there is one, else /bin/sh', () => {
    const argv = commandArgv({kind: 'shell', script: 'echo "$0" "it works"'})
    assert.deepEqual(argv.slice(0, 2), ['/bin/sh', '-c'])
    // This host has bash: the script's $0 says which shell ran it.
    const withBash = execFileSync(argv[0] as string, argv.slice(1), {encoding: 'utf8'})
    assert.equal(withBash, 'bash it works\n')
    const withoutBash = execFileSync(argv[0] as string, argv.slice(1), {encoding: 'utf8', env: {PATH: '/nonexistent'}})
    assert.equal(withoutBash, '/bin/sh it works\n')
  })

  it('keeps the script one argument, whatever it holds', () => {
    const script = `printf '%s|' "$@" 'a b' "quote'd" ; echo`
    assert.equal(shellArgv(script).at(-1), script)
    assert.equal(execFileSync('/bin/sh', shellArgv(script).slice(1), {encoding: 'utf8'}), "a b|quote'd|\n")
  })
})

describe('substituteSecrets', () => {
  const secrets = {TOKEN: 's3cr3t', 'db.pass': '$& $1 p', EMPTY: ''}

  const cases: [string, unknown, unknown][] = [
    ['a whole string', '%%secrets.TOKEN%%', 's3cr3t'],
    ['inside text, twice', 'a=%%secrets.TOKEN%%;b=%%secrets.TOKEN%%', 'a=s3cr3t;b=s3cr3t'],
    ['replacement patterns stay literal', '%%secrets.db.pass%%', '$& $1 p'],
    ['an empty value', 'x%%secrets.EMPTY%%y', 'xy'],
    [
      'deep in objects and arrays',
      {a: [{b: '%%secrets.TOKEN%%'}], n: 1, t: true, z: null},
      {a: [{b: 's3cr3t'}], n: 1, t: true, z: null},
    ],
    ['malformed references are left alone', '%%secret.TOKEN%% %%secrets.%%', '%%secret.TOKEN%% %%secrets.%%'],
    ['names are not replaced, only values', {'%%secrets.TOKEN%%': 'v'}, {'%%secrets.TOKEN%%': 'v'}],
  ]
  for (const [name, input, expected] of cases) {
    it(name, () => assert.deepEqual(substituteSecrets(input, secrets), expected))
  }

  it('returns a new value and leaves the input as it was', () => {
    const input = {env: {A: '%%secrets.TOKEN%%'}}
    const output = substituteSecrets(input, secrets)
    assert.notEqual(output, input)
    assert.equal(input.env.A, '%%secrets.TOKEN%%')
  })

  it('names every missing secret, and shows no value', () => {
    const input = {a: '%%secrets.TOKEN%% %%secrets.NOPE%%', b: ['%%secrets.ALSO_MISSING%%', '%%secrets.constructor%%']}
    assert.throws(
      () => substituteSecrets(input, secrets),
      (error: unknown) =>
        isGpunetError(error) &&
        error.code === 'secret_missing' &&
        error.exitCode === 7 &&
        /ALSO_MISSING, NOPE, constructor/.test(error.message) &&
        !JSON.stringify(error.toJSON()).includes('s3cr3t'),
    )
  })
})
