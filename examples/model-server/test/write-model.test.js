// The GGUF writer on its own: deterministic from its seed, and laid out as ggml's spec says.
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'
import {buildVocabulary, encodeModel, MODEL_SHAPE} from '../write-model.js'

describe('write-model', () => {
  it('writes the same bytes for a seed, and other weights for another seed', () => {
    const one = encodeModel(1)
    assert.deepEqual(encodeModel(1), one)
    const two = encodeModel(2)
    assert.equal(two.length, one.length)
    assert.notDeepEqual(two, one)
  })

  it('starts with the GGUF version 3 header and keeps the tensor data 32-byte aligned', () => {
    const bytes = encodeModel(1)
    assert.equal(bytes.subarray(0, 4).toString('ascii'), 'GGUF')
    assert.equal(bytes.readUInt32LE(4), 3)
    const tensors = Number(bytes.readBigUInt64LE(8))
    assert.equal(tensors, 3 + 9 * MODEL_SHAPE.blocks)
    assert.equal(bytes.length % 32, 0)
    assert.ok(bytes.length > 100_000 && bytes.length < 1_000_000, `${bytes.length} bytes`)
  })

  it('holds every piece once, the byte-fallback pieces and every prefix of its words', () => {
    const {tokens} = buildVocabulary()
    assert.equal(new Set(tokens).size, tokens.length)
    assert.deepEqual(tokens.slice(0, 3), ['<unk>', '<s>', '</s>'])
    assert.equal(tokens[3 + 0x0a], '<0x0A>')
    for (const prefix of ['\u2581ne', '\u2581net', '\u2581netw', '\u2581network'])
      assert.ok(tokens.includes(prefix), prefix)
  })
})
