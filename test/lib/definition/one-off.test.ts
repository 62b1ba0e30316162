import {strict as assert} from 'node:assert'

import {DEFAULT_RUN_IMAGE, oneOffDefinition, parseEnvPairs} from '../../../src/lib/definition/one-off.js'
import {validateJobDefinition} from '../../../src/lib/definition/validate.js'
import {GpunetError} from '../../../src/lib/errors.js'

describe('one-off definitions (job run)', () => {
  it('keeps the command words as an array, quoting and all, in one container/run operation', () => {
    const definition = oneOffDefinition({command: ['sh', '-c', 'echo "a b"; exit 3']})
    assert.deepEqual(definition, {
      version: '0.1',
      type: 'container',
      meta: {trigger: 'cli'},
      ops: [
        {id: 'run', type: 'container/run', args: {image: DEFAULT_RUN_IMAGE, cmd: ['sh', '-c', 'echo "a b"; exit 3']}},
      ],
    })
    assert.equal(validateJobDefinition(definition).success, true)
  })

  it('leaves cmd out without a command, so the image runs its own', () => {
    const {ops} = oneOffDefinition({command: [], image: 'docker.io/library/nginx:1.27'})
    assert.deepEqual(ops[0]!.args, {image: 'docker.io/library/nginx:1.27'})
  })

  it('writes gpu, env and one exposed port as a number, several as a list', () => {
    const one = oneOffDefinition({command: ['x'], gpu: true, env: ['A=1', 'B=x=y=z', 'C='], expose: [8080]})
    assert.deepEqual(one.ops[0]!.args, {
      image: DEFAULT_RUN_IMAGE,
      cmd: ['x'],
      gpu: true,
      env: {A: '1', B: 'x=y=z', C: ''},
      expose: 8080,
    })
    const two = oneOffDefinition({command: [], expose: [80, 443]})
    assert.deepEqual(two.ops[0]!.args.expose, [{port: 80}, {port: 443}])
    assert.equal(validateJobDefinition(one).success, true)
    assert.equal(validateJobDefinition(two).success, true)
  })

  for (const bad of ['KEY', '=value', '']) {
    it(`refuses --env "${bad}" with exit 2 instead of copying this machine's environment`, () => {
      assert.throws(
        () => parseEnvPairs([bad]),
        (error: GpunetError) => error.code === 'env_invalid' && error.exitCode === 2 && /KEY=VALUE/.test(error.message),
      )
    })
  }

  it('refuses an empty --image with exit 2', () => {
    assert.throws(
      () => oneOffDefinition({command: [], image: ' '}),
      (error: GpunetError) => error.code === 'image_invalid' && error.exitCode === 2,
    )
  })

  it('refuses a key given twice, and keeps __proto__ an ordinary member', () => {
    assert.throws(() => parseEnvPairs(['A=1', 'A=2']), /--env A is given twice/)
    const env = parseEnvPairs(['__proto__=x'])
    assert.equal(Object.getPrototypeOf(env), Object.prototype)
    assert.deepEqual(Object.keys(env), ['__proto__'])
    assert.equal(JSON.stringify(env), '{"__proto__":"x"}')
  })

  it('runs Ubuntu 24.04 from Docker Hub when no --image is given', () => {
    assert.equal(DEFAULT_RUN_IMAGE, 'docker.io/library/ubuntu:24.04')
    assert.equal(oneOffDefinition({command: []}).ops[0]!.args.image, 'docker.io/library/ubuntu:24.04')
  })

  it('says --image is empty and names the default image to use instead', () => {
    assert.throws(
      () => oneOffDefinition({command: [], image: ''}),
      (error: GpunetError) =>
        error.message === '--image is empty' &&
        error.hint === 'name an image, such as docker.io/library/ubuntu:24.04, or leave --image out for that one',
    )
  })

  it('shows how to pass a credential when --env is not KEY=VALUE', () => {
    assert.throws(
      () => parseEnvPairs(['A=1', 'TOKEN']),
      (error: GpunetError) =>
        error.message === '--env "TOKEN" is not KEY=VALUE' &&
        error.hint ===
          'write --env KEY=VALUE; for a credential, store it (`gpunet secrets set NAME`) and pass --env KEY=%%secrets.NAME%%',
    )
  })

  it('refuses a key given twice as a usage error (exit 2)', () => {
    assert.throws(
      () => parseEnvPairs(['A=1', 'B=2', 'A=3']),
      (error: GpunetError) =>
        error instanceof GpunetError &&
        error.code === 'env_invalid' &&
        error.message === '--env A is given twice' &&
        error.exitCode === 2,
    )
  })

  it('exposes no port when --expose is not given or empty', () => {
    assert.equal('expose' in oneOffDefinition({command: []}).ops[0]!.args, false)
    assert.equal('expose' in oneOffDefinition({command: [], expose: []}).ops[0]!.args, false)
  })
})
