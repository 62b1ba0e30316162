import {strict as assert} from 'node:assert'

import {makeIssue, memberName, nestingIssue} from '../../../src/lib/definition/issue.js'

describe('definition issues', () => {
  it('an issue names its member as a path and as an RFC 6901 pointer, with a hint only when there is one', () => {
    assert.deepEqual(makeIssue(['ops', 0, 'args', 'image'], 'invalid_type', 'expected a string'), {
      path: 'ops[0].args.image',
      pointer: '/ops/0/args/image',
      code: 'invalid_type',
      message: 'expected a string',
    })
    assert.deepEqual(makeIssue([], 'not_an_object', 'm', 'h'), {
      path: '',
      pointer: '',
      code: 'not_an_object',
      message: 'm',
      hint: 'h',
    })
    assert.ok(!('hint' in makeIssue(['a'], 'invalid', 'm', '')))
  })

  it('a message names the member a path ends in, with its array when it ends in an index', () => {
    assert.equal(memberName([]), 'the job definition')
    assert.equal(memberName(['ops', 0, 'args', 'image']), '`image`')
    assert.equal(memberName(['ops', 2]), '`ops[2]`')
    assert.equal(memberName(['ops', 2, 'args', 'cmd', 1]), '`cmd[1]`')
  })

  it('a definition nested too deep is one issue at the first member past the limit, in words', () => {
    assert.equal(nestingIssue({ops: [{args: {env: {A: 'x'}}}]}), null)
    let deep: unknown = 'x'
    for (let i = 0; i < 70; i++) deep = {n: deep}
    const found = nestingIssue({meta: deep})
    assert.ok(found)
    assert.equal(found.code, 'too_deep')
    assert.equal(found.message, 'nests arrays and objects more than 64 deep, the most a definition may')
    assert.equal(found.hint, 'flatten this member: no network reads a definition nested this deep')
    assert.match(found.path, /^meta(\.n)+$/)
    assert.equal(found.pointer, `/${found.path.replaceAll('.', '/')}`)
  })
})
