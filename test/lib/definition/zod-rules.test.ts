import {strict as assert} from 'node:assert'

import {record, string, unknown} from 'zod'

import {fastPathFormats, hasNoProtoMember, isPlainRecord} from '../../../src/lib/definition/fast-path/zod-rules.js'

/** A constructor whose `prototype` is `prototype`, as an own `constructor` member of a record. */
function withConstructorPrototype(prototype: unknown): Record<string, unknown> {
  function Made(): void {}
  Made.prototype = prototype
  return {A: 'x', constructor: Made}
}

describe('zod rules restated for the fast path', () => {
  describe('isPlainRecord: what zod’s record() takes as an object', () => {
    const arrayAsObject: unknown[] & {constructor?: unknown} = []
    arrayAsObject.constructor = Object
    const hiddenSymbol = {A: 'x'}
    Object.defineProperty(hiddenSymbol, Symbol('hidden'), {value: 'y', enumerable: false})
    class Env {
      A = 'x'
    }

    const cases: [string, object, boolean][] = [
      ['an empty object', {}, true],
      ['an object of strings', {A: 'x'}, true],
      ['an object without a prototype', Object.create(null) as object, true],
      ['an object whose `constructor` member is a string', {constructor: 'x'}, true],
      ['an object with an empty member name', {'': 'x'}, true],
      ['an object with a symbol key that is not enumerable', hiddenSymbol, true],
      [
        'an object whose constructor’s prototype has its own isPrototypeOf',
        withConstructorPrototype(Object.assign(Object.create(null) as object, {isPrototypeOf: () => false})),
        true,
      ],
      ['an array', [], false],
      ['an array whose constructor is Object', arrayAsObject, false],
      ['an object with an enumerable symbol key', {A: 'x', [Symbol('s')]: 'y'}, false],
      ['a class instance', new Env(), false],
      ['a Date', new Date(0), false],
      ['an object made from Array.prototype', Object.assign(Object.create(Array.prototype) as object, {A: 'x'}), false],
      ['an object whose constructor is an arrow function (no prototype)', {A: 'x', constructor: () => 0}, false],
      ['an object whose constructor’s prototype is null', withConstructorPrototype(null), false],
      [
        'an object whose constructor’s prototype is an array with its own isPrototypeOf',
        withConstructorPrototype(Object.assign([], {isPrototypeOf: () => false})),
        false,
      ],
    ]

    for (const [what, value, plain] of cases) {
      it(`${plain ? 'takes' : 'refuses'} ${what}, as zod does`, () => {
        assert.equal(isPlainRecord(value), plain)
        assert.equal(record(string(), unknown()).safeParse(value).success, plain, 'zod’s verdict')
      })
    }

    it('refuses an own `__proto__` member, which zod would drop', () => {
      const value = JSON.parse('{"A": "x", "__proto__": "y"}') as object
      assert.equal(isPlainRecord(value), false)
      assert.equal(hasNoProtoMember(value), false)
      const parsed = record(string(), unknown()).safeParse(value)
      assert.deepEqual(parsed.success && Object.keys(parsed.data), ['A'])
    })

    it('takes members named like `__proto__` but not it', () => {
      assert.equal(hasNoProtoMember({'': 1, proto: 2, __proto: 3}), true)
      assert.equal(hasNoProtoMember({}), true)
    })
  })

  describe('the uri format', () => {
    it('takes an absolute URI written as zod keeps it', () => {
      assert.equal(fastPathFormats.uri('https://example.com/path'), true)
      assert.equal(fastPathFormats.uri('mailto:x@y.z'), true)
    })

    it('refuses text zod would trim or clean, and text that is no URI', () => {
      for (const text of [' https://example.com', 'https://example.com\n', 'https://exa\tmple.com', 'bucket/key', '']) {
        assert.equal(fastPathFormats.uri(text), false, JSON.stringify(text))
      }
    })
  })
})
