/**
 * The definition `job post` and `job run` send (definition/upload.ts): read and checked for the network before
 * anything is uploaded or paid. A definition that cannot go is exit 3, its error named after the first issue, with
 * every issue in the message and, one by one, in the error's fields.
 */
import {strict as assert} from 'node:assert'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {NOSANA_TYPES_VERSION} from '../../../src/lib/definition/network-form/nosana-validator.generated.js'
import {checkPostableText, loadPostableDefinition} from '../../../src/lib/definition/upload.js'
import {GpunetError} from '../../../src/lib/errors.js'

const VALIDATOR = `@nosana/types ${NOSANA_TYPES_VERSION}`
const VARIABLES_UNKNOWN =
  'unknown field `variables`; allowed fields are `image`, `gpu`, `entrypoint`, `env`, `work_dir`'
const VALID = JSON.stringify(
  {version: '0.1', type: 'container', ops: [{id: 'run', type: 'container/run', args: {image: 'ubuntu'}}]},
  null,
  2,
)
/** In the network's newer format: `global.variables` is beyond spec 0.1. */
const NEWER =
  '{"version": "0.1", "type": "container",\n"global": {"variables": {"A": "b"}},\n"ops": [{"id": "a", "type": "container/run", "args": {"image": "x"}}]}'

/** The GpunetError `promise` rejects with, as plain members. */
async function failure(promise: Promise<unknown>): Promise<{
  code: string
  message: string
  exitCode: number
  hint: string | undefined
  fields: unknown
}> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof GpunetError, String(error))
    const {code, message, exitCode, hint, fields} = error
    return {code, message, exitCode, hint, fields}
  }
  assert.fail('it did not fail')
}

describe('a definition to post (job post, job run)', () => {
  describe('checked from its text', () => {
    it('a valid one: what is uploaded, with its warnings', async () => {
      const loaded = await checkPostableText(NEWER, 'job.json', 'devnet')
      assert.equal(loaded.upload.network, 'devnet')
      assert.deepEqual(loaded.upload.checks, [
        {by: 'spec 0.1', verdict: 'beyond it (1 member)'},
        {by: VALIDATOR, verdict: 'accepted'},
      ])
      assert.deepEqual(loaded.warnings, [
        {
          path: 'global.variables',
          pointer: '/global/variables',
          code: 'beyond_spec',
          message: `goes beyond spec 0.1 (${VARIABLES_UNKNOWN}); the network's newer format has it`,
          hint: `${VALIDATOR} accepts it; other clients of spec 0.1 may not`,
          line: 2,
          column: 25,
        },
      ])
    })

    it('an invalid one: exit 3, every error at its line and column, the document named as such', async () => {
      assert.deepEqual(await failure(checkPostableText('[]', 'job.json', 'devnet')), {
        code: 'invalid_definition',
        message: [
          'job.json is not a valid job definition:',
          '  job.json:1:1 (document): a job definition must be a JSON object, got an array',
          `  job.json:1:1 type: is required by ${VALIDATOR} (expected "container")`,
          `  job.json:1:1 version: is required by ${VALIDATOR} (expected "0.1")`,
          `  job.json:1:1 ops: is required by ${VALIDATOR} (expected (Ops & UniqueById))`,
        ].join('\n'),
        exitCode: 3,
        hint: 'run `gpunet job validate --network devnet job.json` for details; nothing was uploaded or sent',
        fields: {
          file: 'job.json',
          errors: [
            {
              path: '',
              pointer: '',
              code: 'not_an_object',
              message: 'a job definition must be a JSON object, got an array',
              line: 1,
              column: 1,
            },
            {
              path: 'type',
              pointer: '/type',
              code: 'network_refused',
              message: `is required by ${VALIDATOR} (expected "container")`,
              line: 1,
              column: 1,
            },
            {
              path: 'version',
              pointer: '/version',
              code: 'network_refused',
              message: `is required by ${VALIDATOR} (expected "0.1")`,
              line: 1,
              column: 1,
            },
            {
              path: 'ops',
              pointer: '/ops',
              code: 'network_refused',
              message: `is required by ${VALIDATOR} (expected (Ops & UniqueById))`,
              line: 1,
              column: 1,
            },
          ],
        },
      })
    })

    it("an invalid one with the caller's hint (job run's)", async () => {
      const text =
        '{"version": "0.1", "type": "container", "ops": [{"id": "a", "type": "container/run", "args": {"image": 5}}]}'
      const error = await failure(checkPostableText(text, 'run.json', 'mainnet', 'check the flags of job run'))
      assert.equal(error.code, 'invalid_definition')
      assert.equal(
        error.message,
        'run.json is not a valid job definition:\n  run.json:1:104 ops[0].args.image: `image` must be a string, got number 5',
      )
      assert.equal(error.hint, 'check the flags of job run')
    })

    it("one with no equivalent in the network's form: named so, with the issue's own hint", async () => {
      const text =
        '{"version": "0.1", "type": "container", "ops": [{"id": "a b", "type": "container/run", "args": {"image": "x"}}]}'
      assert.deepEqual(await failure(checkPostableText(text, 'job.json', 'mainnet')), {
        code: 'no_network_equivalent',
        message:
          "job.json has members with no equivalent in the form mainnet's nodes accept:\n  job.json:1:56 ops[0].id: the network's nodes refuse an operation id with a space",
        exitCode: 3,
        hint: 'use `-` or `_` instead; nothing was uploaded or sent',
        fields: {
          file: 'job.json',
          errors: [
            {
              path: 'ops[0].id',
              pointer: '/ops/0/id',
              code: 'no_network_equivalent',
              message: "the network's nodes refuse an operation id with a space",
              line: 1,
              column: 56,
              hint: 'use `-` or `_` instead',
            },
          ],
        },
      })
    })

    it("one the network's nodes would refuse: named after the network and its validator", async () => {
      const text =
        '{"version": "0.1", "type": "container",\n"ops": [{"id": "a", "type": "container/run", "args": {"image": "x", "output": "/o"}}],\n"global": {"variables": {"A": "b"}}}'
      const error = await failure(checkPostableText(text, 'job.json', 'devnet'))
      assert.equal(error.code, 'network_refused')
      assert.equal(
        error.message,
        [
          `job.json would be refused by devnet's nodes (${VALIDATOR}):`,
          `  job.json:2:79 ops[0].args.output: is not a member ${VALIDATOR} knows: the network's nodes fail a job that has it`,
          `  job.json:3:12 global.variables: ${VARIABLES_UNKNOWN}`,
        ].join('\n'),
      )
      assert.equal(error.exitCode, 3)
      assert.equal(
        error.hint,
        'run `gpunet job validate --network devnet job.json` for details; nothing was uploaded or sent',
        "the network's refusal has no hint of its own",
      )
    })

    it("one the localnet's node cannot run: named so, with the issue's hint", async () => {
      const text =
        '{"version": "0.1", "type": "container",\n"ops": [{"id": "a", "type": "container/run", "args": {"image": "x", "private": true}}]}'
      const error = await failure(checkPostableText(text, 'job.json', 'localnet'))
      assert.equal(error.code, 'localnet_cannot_run')
      assert.equal(
        error.message,
        "job.json has members the localnet's node cannot run:\n  job.json:2:80 ops[0].args.private: the localnet's node cannot run it: unknown field `private`; allowed fields are `image`, `cmd`, `gpu`, `expose`, `entrypoint`, `env`, `work_dir`, `output`, `required_vram`, `resources`, `authentication`",
      )
      assert.equal(
        error.hint,
        "it runs what spec 0.1 describes; post it to devnet or mainnet, where the network's nodes take it; nothing was uploaded or sent",
      )
    })
  })

  describe('read from its file', () => {
    let dir: string
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'gpunet-upload-'))
    })
    after(async () => {
      await rm(dir, {recursive: true, force: true})
    })

    it('a valid file: ready to upload, no warnings', async () => {
      const file = join(dir, 'job.json')
      await writeFile(file, VALID)
      const loaded = await loadPostableDefinition(file, 'mainnet')
      assert.deepEqual(loaded.warnings, [])
      assert.equal(new TextDecoder().decode(loaded.upload.bytes), `${VALID}\n`)
    })

    it('a missing file: exit 3, unreadable, nothing else', async () => {
      const file = join(dir, 'missing.json')
      assert.deepEqual(await failure(loadPostableDefinition(file, 'devnet')), {
        code: 'unreadable',
        message: `cannot read ${file}: no such file`,
        exitCode: 3,
        hint: undefined,
        fields: {},
      })
    })

    it('a binary file: exit 3, not text', async () => {
      const file = join(dir, 'job.bin')
      await writeFile(file, Buffer.from([0x7b, 0x00, 0xff]))
      const error = await failure(loadPostableDefinition(file, 'devnet'))
      assert.equal(error.code, 'not_text')
      assert.equal(error.exitCode, 3)
    })

    it('an invalid file: exit 3, named by the path given', async () => {
      const file = join(dir, 'bad.json')
      await writeFile(file, '{"version": "0.1"')
      const error = await failure(loadPostableDefinition(file, 'devnet'))
      assert.equal(error.code, 'invalid_definition')
      assert.equal(error.exitCode, 3)
      assert.ok(error.message.startsWith(`${file} is not a valid job definition:\n  ${file}:1:`), error.message)
      assert.equal(
        error.hint,
        `run \`gpunet job validate --network devnet ${file}\` for details; nothing was uploaded or sent`,
      )
    })
  })
})
