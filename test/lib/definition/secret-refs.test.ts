import {strict as assert} from 'node:assert'

import {
  findSecretReferences,
  hasSecretReference,
  isOnlySecretReferences,
  malformedSecretReferences,
  SECRET_NAME_PATTERN,
  secretReference,
} from '../../../src/lib/definition/secret-refs.js'

describe('secret references in a definition (%%secrets.NAME%%)', () => {
  it('a name starts with a letter or _, then letters, digits, _ . -, at most 128 in all', () => {
    for (const name of ['A', '_', 'ab', 'a.b-c_9', `a${'b'.repeat(127)}`])
      assert.ok(SECRET_NAME_PATTERN.test(name), name)
    for (const name of ['', '9a', '.a', '-a', 'a b', 'a$', `a${'b'.repeat(128)}`, 'ab\n']) {
      assert.ok(!SECRET_NAME_PATTERN.test(name), JSON.stringify(name))
    }
    assert.equal(secretReference('DB_PASSWORD'), '%%secrets.DB_PASSWORD%%')
  })

  it('tells a string made only of references from one with text written inline', () => {
    assert.equal(isOnlySecretReferences('%%secrets.A%%'), true)
    assert.equal(isOnlySecretReferences(' %%secrets.A%%%%secrets.B%% '), true)
    assert.equal(isOnlySecretReferences('x%%secrets.A%%'), false)
    assert.equal(isOnlySecretReferences('plain'), false)
    assert.equal(isOnlySecretReferences(''), false)
    assert.equal(isOnlySecretReferences('   '), false)
  })

  it('finds a reference the same way however often it is asked (the pattern is global)', () => {
    for (let i = 0; i < 3; i++) assert.equal(hasSecretReference('a %%secrets.TOKEN%% b'), true)
    assert.equal(hasSecretReference('%%secret.TOKEN%%'), false)
    assert.equal(hasSecretReference('%%secrets.9x%%'), false)
  })

  it('points out text that was probably meant as a reference', () => {
    assert.deepEqual(malformedSecretReferences('no references here'), [])
    assert.deepEqual(malformedSecretReferences('%%secrets.A%% only valid ones %%secrets.B%%'), [])
    assert.deepEqual(malformedSecretReferences('use %%secret.X%% here'), ['%%secret.X%%'])
    assert.deepEqual(malformedSecretReferences('%%secrets.%%'), ['%%secrets.%%'])
    assert.deepEqual(malformedSecretReferences('%% secrets.A%%'), ['%% secrets.A%%'])
    assert.deepEqual(malformedSecretReferences('%%SECRETS.a%%'), ['%%SECRETS.a%%'])
    assert.deepEqual(malformedSecretReferences('%%secret.XYZ%%'), ['%%secret.XYZ%%'])
    // A missing closing %%, or half of it.
    assert.deepEqual(malformedSecretReferences('%%secret.X'), ['%%secret.X'])
    assert.deepEqual(malformedSecretReferences('%%secrets.A%% and %%secrets.B%'), ['%%secrets.B%'])
    // What is left once the valid references are taken out, as it reads then.
    assert.deepEqual(malformedSecretReferences('%%%%secrets.A%%secret.B%%'), ['%%secret.B%%'])
  })

  it('lists every name referred to anywhere, sorted and once each', () => {
    const definition = {
      ops: [
        {args: {env: {A: '%%secrets.b%%', B: 'x %%secrets.a%% %%secrets.b%%'}, cmd: ['%%secrets.c.d%%']}},
        {args: {image: 'ubuntu', gpu: true, n: 3}},
      ],
      meta: {note: '%%secret.notOne%%'},
    }
    assert.deepEqual(findSecretReferences(definition), ['a', 'b', 'c.d'])
    assert.deepEqual(findSecretReferences({}), [])
  })
})
