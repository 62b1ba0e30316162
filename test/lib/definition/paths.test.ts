import {strict as assert} from 'node:assert'

import {
  formatPath,
  fromPointer,
  isObject,
  type PathSegment,
  toPointer,
  valueAt,
  visitStrings,
} from '../../../src/lib/definition/paths.js'
import {GpunetError} from '../../../src/lib/errors.js'

describe('definition paths', () => {
  it('formats paths as a person reads them, quoting names that are not identifiers', () => {
    assert.equal(formatPath([]), '')
    assert.equal(formatPath(['ops', 0, 'args', 'image']), 'ops[0].args.image')
    assert.equal(formatPath(['env', 'MY-KEY', '$x']), 'env["MY-KEY"].$x')
    assert.equal(formatPath([1, '']), '[1][""]')
  })

  it('escapes ~ and / in JSON pointers, and reads them back', () => {
    assert.equal(toPointer([]), '')
    assert.equal(toPointer(['ops', 0, 'a~b', 'c/d', '~1']), '/ops/0/a~0b/c~1d/~01')
    assert.deepEqual(fromPointer('/ops/0/a~0b/c~1d/~01'), ['ops', '0', 'a~b', 'c/d', '~1'])
    assert.deepEqual(fromPointer('/'), [''])
  })

  it('reads the root pointer "" as no segments at all', () => {
    assert.deepEqual(fromPointer(''), [])
  })

  it('reads values at a path, and undefined past a missing member, null or a string', () => {
    const root = {a: {b: [10, {c: 'x'}], n: null, s: 'abc'}}
    assert.equal(valueAt(root, ['a', 'b', 1, 'c']), 'x')
    assert.equal(valueAt(root, []), root)
    assert.equal(valueAt(root, ['a', 'missing', 'c']), undefined)
    assert.equal(valueAt(root, ['a', 'n', 'x']), undefined)
    assert.equal(valueAt(root, ['a', 's', 'length']), undefined)
    assert.equal(valueAt(root, ['a', 'b', 0, 'toFixed']), undefined)
  })

  it('tells plain objects from arrays and null', () => {
    assert.equal(isObject({}), true)
    assert.equal(isObject([]), false)
    assert.equal(isObject(null), false)
    assert.equal(isObject('x'), false)
  })

  it('visits every string value with the full path to it, not member names', () => {
    const seen: [string, PathSegment[]][] = []
    visitStrings({name: 'top', ops: [{args: {cmd: ['a', 'b'], n: 1}}, 'op'], flag: true}, (text, path) =>
      seen.push([text, path]),
    )
    assert.deepEqual(seen, [
      ['top', ['name']],
      ['a', ['ops', 0, 'args', 'cmd', 0]],
      ['b', ['ops', 0, 'args', 'cmd', 1]],
      ['op', ['ops', 1]],
    ])
    const root: [string, PathSegment[]][] = []
    visitStrings('only', (text, path) => root.push([text, path]))
    assert.deepEqual(root, [['only', []]])
  })

  it('refuses a value nested too deep before walking it, naming the job definition', () => {
    let deep: unknown = 'x'
    for (let i = 0; i < 100; i++) deep = [deep]
    assert.throws(
      () => visitStrings(deep, () => {}),
      (error: unknown) =>
        error instanceof GpunetError &&
        error.code === 'too_deep' &&
        error.message.startsWith('the job definition nests arrays and objects more than 64 deep'),
    )
  })
})
