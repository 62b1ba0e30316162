import {strict as assert} from 'node:assert'

import {lintJobDefinition} from '../../../src/lib/definition/lint.js'

const EXPOSED =
  'is written inline: the definition is uploaded where the node that runs it, and anyone with its address, can read it'

function job(args: Record<string, unknown>): Record<string, unknown> {
  return {version: '0.1', type: 'container', ops: [{id: 'a', type: 'container/run', args: {image: 'x', ...args}}]}
}

/** The env names of one operation that lintJobDefinition flags as credentials written inline. */
function flaggedEnv(env: Record<string, string>): string[] {
  return lintJobDefinition(job({env})).map((w) => {
    assert.equal(w.code, 'inline_credential')
    return w.path.replace(/^ops\[0\]\.args\.env\.?/, '')
  })
}

describe('lint warnings: credentials written inline', () => {
  it('names the env value, why it is exposed, and the secret to store it as', () => {
    assert.deepEqual(lintJobDefinition(job({env: {HF_TOKEN: 'abc123'}})), [
      {
        path: 'ops[0].args.env.HF_TOKEN',
        pointer: '/ops/0/args/env/HF_TOKEN',
        code: 'inline_credential',
        message: `env value \`HF_TOKEN\` looks like a credential and ${EXPOSED}`,
        hint: 'write "%%secrets.HF_TOKEN%%" instead and store the value with `gpunet secrets set HF_TOKEN`',
      },
    ])
  })

  it('names the registry password and suggests the secret REGISTRY_PASSWORD', () => {
    assert.deepEqual(lintJobDefinition(job({authentication: {docker: {username: 'u', password: 'hunter2'}}})), [
      {
        path: 'ops[0].args.authentication.docker.password',
        pointer: '/ops/0/args/authentication/docker/password',
        code: 'inline_credential',
        message: `the registry password ${EXPOSED}`,
        hint: 'write "%%secrets.REGISTRY_PASSWORD%%" instead and store the value with `gpunet secrets set REGISTRY_PASSWORD`',
      },
    ])
  })

  it('names the storage key and suggests an AWS_ secret of the same name', () => {
    const value = job({resources: [{type: 'S3', target: '/d', url: 'https://s3', IAM: {ACCESS_KEY_ID: 'id1'}}]})
    assert.deepEqual(lintJobDefinition(value), [
      {
        path: 'ops[0].args.resources[0].IAM.ACCESS_KEY_ID',
        pointer: '/ops/0/args/resources/0/IAM/ACCESS_KEY_ID',
        code: 'inline_credential',
        message: `the storage key \`ACCESS_KEY_ID\` ${EXPOSED}`,
        hint: 'write "%%secrets.AWS_ACCESS_KEY_ID%%" instead and store the value with `gpunet secrets set AWS_ACCESS_KEY_ID`',
      },
    ])
  })

  it('suggests a secret name made of upper-case letters, digits and _ from any env name', () => {
    const hints = (name: string) =>
      lintJobDefinition(job({env: {[name]: 'abc123'}})).map((w) => /%%secrets\.([^%]*)%%/.exec(w.hint ?? '')?.[1])
    assert.deepEqual(hints('db_password'), ['DB_PASSWORD'])
    assert.deepEqual(hints('TOKEN_my-app.v2'), ['TOKEN_MY_APP_V2'])
    // A secret name cannot start with a digit: it gets a leading _.
    assert.deepEqual(hints('1_TOKEN'), ['_1_TOKEN'])
    // A token shape under an empty name still gets a name to store it as.
    const empty = lintJobDefinition(job({env: {'': 'hf_abcdefghijklmnopqrstuvwx'}}))
    assert.deepEqual(
      empty.map((w) => [w.path, w.pointer, w.hint]),
      [
        [
          'ops[0].args.env[""]',
          '/ops/0/args/env/',
          'write "%%secrets.SECRET%%" instead and store the value with `gpunet secrets set SECRET`',
        ],
      ],
    )
  })

  it('knows credential names with or without _ inside, and CREDENTIAL singular', () => {
    assert.deepEqual(
      flaggedEnv({
        APIKEY: 'abc123',
        ACCESSKEY: 'abc123',
        PRIVATEKEY: 'abc123',
        GOOGLE_CREDENTIAL: 'abc123',
        GOOGLE_CREDENTIALS: 'abc123',
        MONKEY: 'abc123',
        AUTHOR: 'abc123',
      }),
      ['APIKEY', 'ACCESSKEY', 'PRIVATEKEY', 'GOOGLE_CREDENTIAL', 'GOOGLE_CREDENTIALS'],
    )
  })

  it('flags token shapes of each kind under any name, padded with spaces or not', () => {
    const tokens: Record<string, string> = {
      HUGGING_FACE: 'hf_abcdefghijklmnopqrstuvwx',
      OPENAI: 'sk-proj_abcdefghijklmnopqrst',
      GITHUB_CLASSIC: `ghp_${'a1B2c3D4e5'.repeat(4)}`,
      GITHUB_FINE: `github_pat_${'a1_B2c3D4e5'.repeat(5)}`,
      AWS_ID: 'AKIAIOSFODNN7EXAMPLE',
      AWS_TEMP: 'ASIAIOSFODNN7EXAMPLE',
      SLACK: 'xoxb-1234567890-abcdefghij',
      GITLAB: 'glpat-abcdefghij_KLMNOPQRST',
      JWT: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      PEM: '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----',
      PEM_PLAIN: '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\n-----END PRIVATE KEY-----',
      PADDED: '  hf_abcdefghijklmnopqrstuvwx  ',
    }
    assert.deepEqual(flaggedEnv(tokens), Object.keys(tokens))
  })

  it('does not take a token shape with text before or after it, or too short, for a token', () => {
    const near: Record<string, string> = {
      HF_BEFORE: 'xhf_abcdefghijklmnopqrstuvwx',
      HF_AFTER: 'hf_abcdefghijklmnopqrstuvwx!',
      SK_BEFORE: 'task-abcdefghijklmnopqrstuvwxyz',
      SK_AFTER: 'sk-abcdefghijklmnopqrstuvwxyz!',
      GH_BEFORE: `xghp_${'a1B2c3D4e5'.repeat(4)}`,
      GH_AFTER: `ghp_${'a1B2c3D4e5'.repeat(4)}!`,
      GH_SHORT: 'ghp_a',
      GH_PAT_SHORT: 'github_pat_a',
      AWS_BEFORE: 'XAKIAIOSFODNN7EXAMPLE',
      AWS_AFTER: 'AKIAIOSFODNN7EXAMPLEX',
      AWS_SHORT: 'AKIAB',
      SLACK_BEFORE: 'axoxb-1234567890-abcdefghij',
      SLACK_AFTER: 'xoxb-1234567890-abcdefghij!',
      SLACK_SHORT: 'xoxb-1',
      GITLAB_BEFORE: 'myglpat-abcdefghij_KLMNOPQRST',
      GITLAB_AFTER: 'glpat-abcdefghij_KLMNOPQRST!',
      GITLAB_SHORT: 'glpat-a',
      JWT_BEFORE: 'xeyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N',
      JWT_AFTER: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N!',
      JWT_SHORT_HEAD: 'eyJa.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N',
      JWT_SHORT_BODY: 'eyJhbGciOiJIUzI1NiJ9.x.dozjgNryP4J3jVmNHl0w5N',
      JWT_SHORT_SIG: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.a',
      PEM_PUBLIC: '-----BEGIN PUBLIC KEY-----',
    }
    assert.deepEqual(flaggedEnv(near), [])
  })

  it('does not flag switches, numbers and placeholders, nor empty values, under credential names', () => {
    const quiet = {
      AUTH: 'enable',
      WEBUI_AUTH: 'Disable',
      API_AUTH: ' off ',
      TOKEN_TTL: '0.25',
      DB_PASSWORD: '',
      REDIS_PASSWORD: '   ',
      ADMIN_PASSWORD: '****',
      HF_TOKEN: 'change-me',
      GITHUB_TOKEN: 'change me',
      API_KEY: 'replaceme',
      SECRET_KEY: 'replace-me',
      ACCESS_KEY: 'replace_me',
    }
    assert.deepEqual(flaggedEnv(quiet), [])
  })

  it('flags a value that only ends or starts like a placeholder', () => {
    assert.deepEqual(
      flaggedEnv({HF_TOKEN: 'abc<your-token>', API_KEY: 'real-key-{{API_KEY}}', DB_PASSWORD: 'p4ss****'}),
      ['HF_TOKEN', 'API_KEY', 'DB_PASSWORD'],
    )
  })
})

describe('lint warnings: malformed secret references', () => {
  it('quotes the fragment and says how a reference is written', () => {
    assert.deepEqual(lintJobDefinition(job({cmd: ['echo', '%%secret.NAME%%']})), [
      {
        path: 'ops[0].args.cmd[1]',
        pointer: '/ops/0/args/cmd/1',
        code: 'malformed_secret_reference',
        message: '`%%secret.NAME%%` looks like a secret reference but is not one, so it is passed on as plain text',
        hint: 'a reference is written exactly "%%secrets.NAME%%"; NAME starts with a letter or _ and holds letters, digits, _, . or -',
      },
    ])
  })
})

describe('lint warnings: resources and ports', () => {
  it('says what an S3 resource without url or an HF resource without repo lacks', () => {
    const value = job({
      resources: [
        {type: 'S3', target: '/d'},
        {type: 'S3', target: '/e', url: 'https://s3'},
        {type: 'HF', target: '/m'},
        {type: 'HF', target: '/n', repo: 'org/model'},
      ],
    })
    assert.deepEqual(lintJobDefinition(value), [
      {
        path: 'ops[0].args.resources[0]',
        pointer: '/ops/0/args/resources/0',
        code: 'resource_incomplete',
        message: 'an S3 resource without `url` has nowhere to load from',
      },
      {
        path: 'ops[0].args.resources[2]',
        pointer: '/ops/0/args/resources/2',
        code: 'resource_incomplete',
        message: 'an HF resource without `repo` names no model repository',
      },
    ])
  })

  it('skips resources that are not objects', () => {
    assert.deepEqual(lintJobDefinition(job({resources: [null, 'x', 3, {type: 'HF'}]})), [
      {
        path: 'ops[0].args.resources[3]',
        pointer: '/ops/0/args/resources/3',
        code: 'resource_incomplete',
        message: 'an HF resource without `repo` names no model repository',
      },
    ])
  })
})
