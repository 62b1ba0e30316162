import {strict as assert} from 'node:assert'

import {lintJobDefinition} from '../../../src/lib/definition/lint.js'
import {findSecretReferences} from '../../../src/lib/definition/secret-refs.js'

function job(args: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: '0.1',
    type: 'container',
    ops: [{id: 'a', type: 'container/run', args: {image: 'x', ...args}}],
    ...extra,
  }
}

const codesAndPaths = (value: unknown) => lintJobDefinition(value).map((w) => [w.code, w.path])

describe('lintJobDefinition', () => {
  it('warns about IAM keys written inline, not about REGION or references', () => {
    const value = job({
      resources: [
        {
          type: 'S3',
          target: '/d',
          url: 'https://s3',
          IAM: {ACCESS_KEY_ID: 'AKIAABCDEFGHIJKLMNOP', REGION: 'eu', SECRET_ACCESS_KEY: 'abc'},
        },
        {
          type: 'S3',
          target: '/e',
          url: 'https://s3',
          IAM: {ACCESS_KEY_ID: '%%secrets.K%%', SECRET_ACCESS_KEY: '%%secrets.S%%'},
        },
      ],
    })
    assert.deepEqual(codesAndPaths(value), [
      ['inline_credential', 'ops[0].args.resources[0].IAM.ACCESS_KEY_ID'],
      ['inline_credential', 'ops[0].args.resources[0].IAM.SECRET_ACCESS_KEY'],
    ])
    const warning = lintJobDefinition(value)[1]
    assert.match(warning?.hint ?? '', /%%secrets\.AWS_SECRET_ACCESS_KEY%%/)
    assert.match(warning?.hint ?? '', /gpunet secrets set AWS_SECRET_ACCESS_KEY/)
  })

  it('warns about a registry password written inline', () => {
    const value = job({authentication: {docker: {username: 'u', password: 'hunter2'}}})
    assert.deepEqual(codesAndPaths(value), [['inline_credential', 'ops[0].args.authentication.docker.password']])
    assert.match(lintJobDefinition(value)[0]?.hint ?? '', /%%secrets\.REGISTRY_PASSWORD%%/)
    assert.deepEqual(codesAndPaths(job({authentication: {docker: {username: 'u', password: '%%secrets.REG%%'}}})), [])
  })

  it('warns about env values that look like tokens, by name or by shape', () => {
    const value = job(
      {
        env: {
          HF_TOKEN: 'abc123',
          MODEL: 'llama',
          KEY: 'sk-abcdefghijklmnopqrstuvwxyz123456',
          API_KEY: '%%secrets.API_KEY%%',
        },
      },
      {global: {env: {DB_PASSWORD: 'pw', PORT: '80'}}},
    )
    assert.deepEqual(codesAndPaths(value), [
      ['inline_credential', 'global.env.DB_PASSWORD'],
      ['inline_credential', 'ops[0].args.env.HF_TOKEN'],
      ['inline_credential', 'ops[0].args.env.KEY'],
    ])
  })

  it('does not cry wolf: switches, numbers and placeholders are not credentials', () => {
    const quiet = job(
      {
        env: {
          WEBUI_AUTH: 'False',
          ENABLE_AUTH: 'true',
          AUTH: 'off',
          TOKEN_TTL: '3600',
          PASSWORD_MIN_LENGTH: '12.5',
          HF_TOKEN: '<your-token>',
          API_KEY: '{{API_KEY}}',
          SECRET_KEY: '${SECRET_KEY}',
          DB_PASSWORD: '$DB_PASSWORD',
          GITHUB_TOKEN: 'changeme',
          ACCESS_KEY: 'xxxxxxxx',
          PRIVATE_KEY: 'your-private-key-here',
        },
        authentication: {docker: {username: 'u', password: '<registry password>'}},
        resources: [
          {type: 'S3', target: '/d', url: 'https://s3', IAM: {ACCESS_KEY_ID: '<key id>', SECRET_ACCESS_KEY: '...'}},
        ],
      },
      {global: {env: {AUTH_ENABLED: 'no', PASSWORD: 'NONE'}}},
    )
    assert.deepEqual(codesAndPaths(quiet), [])
  })

  it('still flags real values next to those words, and token shapes under any name', () => {
    const loud = job({
      env: {
        WEBUI_AUTH: 'admin:s3cret',
        HF_TOKEN: '<your-token>x',
        API_KEY: 'true-but-not-a-switch',
        DB_PASSWORD: '12345abc',
        MODEL_ID: 'hf_abcdefghijklmnopqrstuvwx',
        PORT: '8080',
      },
      authentication: {docker: {username: 'u', password: 'false1'}},
    })
    assert.deepEqual(codesAndPaths(loud).sort(), [
      ['inline_credential', 'ops[0].args.authentication.docker.password'],
      ['inline_credential', 'ops[0].args.env.API_KEY'],
      ['inline_credential', 'ops[0].args.env.DB_PASSWORD'],
      ['inline_credential', 'ops[0].args.env.HF_TOKEN'],
      ['inline_credential', 'ops[0].args.env.MODEL_ID'],
      ['inline_credential', 'ops[0].args.env.WEBUI_AUTH'],
    ])
  })

  it('flags malformed secret references anywhere', () => {
    const value = job({cmd: ['echo', '%%secret.NAME%%'], env: {A: '%%secrets.%%'}})
    assert.deepEqual(
      codesAndPaths(value).map((c) => c[0]),
      ['malformed_secret_reference', 'malformed_secret_reference'],
    )
    assert.deepEqual(codesAndPaths(job({cmd: 'echo %%secrets.GOOD_1%%'})), [])
  })

  it('flags incomplete resources; a port out of range is an error of the validator, not a warning', () => {
    assert.deepEqual(codesAndPaths(job({expose: 70000})), [])
    assert.deepEqual(codesAndPaths(job({resources: [{type: 'HF', target: '/m'}]})), [
      ['resource_incomplete', 'ops[0].args.resources[0]'],
    ])
  })

  it('never throws on values of the wrong shape', () => {
    for (const value of [null, 1, [], {ops: 'x'}, {ops: [null, {args: 3}]}])
      assert.deepEqual(lintJobDefinition(value), [])
  })
})

describe('findSecretReferences', () => {
  it('lists every referenced name once, from any string at any depth', () => {
    const value = job(
      {
        cmd: ['run', '--token=%%secrets.TOKEN%%'],
        env: {A: '%%secrets.B%%-%%secrets.A%%'},
        authentication: {docker: {username: 'u', password: '%%secrets.TOKEN%%'}},
      },
      {meta: {note: '%%secrets.meta.v1%%'}},
    )
    assert.deepEqual(findSecretReferences(value), ['A', 'B', 'TOKEN', 'meta.v1'])
  })
})
