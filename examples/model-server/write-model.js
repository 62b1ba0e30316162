#!/usr/bin/env node
// Writes a tiny llama-architecture GGUF model with random weights (about 400 KB), deterministic from a seed.
// Its text is gibberish, but llama.cpp loads it like any other model: its SentencePiece tokenizer, sampling,
// streaming and timing are real. The format is written from ggml's GGUF spec (docs/gguf.md, version 3).
import {mkdirSync, renameSync, writeFileSync} from 'node:fs'
import {dirname, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'

/** Where `npm start` and the test look for the model unless MODEL_PATH says otherwise. */
export const DEFAULT_MODEL_PATH = resolve(dirname(fileURLToPath(import.meta.url)), 'models', 'tiny-random-llama.gguf')

/** The model's shape: small enough to load and answer in a fraction of a second on one CPU core. */
export const MODEL_SHAPE = Object.freeze({
  contextLength: 2048,
  embedding: 64,
  feedForward: 128,
  blocks: 2,
  heads: 4,
  headsKv: 2,
})

const GGUF_VERSION = 3
const ALIGNMENT = 32
// gguf_type values of the spec's metadata.
const T = {UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9}
const GGML_TYPE_F32 = 0
// llama_token_type values (llama.cpp's vocabulary token attributes as stored in GGUF).
const TOKEN = {NORMAL: 1, UNKNOWN: 2, CONTROL: 3, BYTE: 6}
const SPACE = '\u2581' // SentencePiece's visible space

const WORDS = [
  'the',
  'and',
  'of',
  'to',
  'in',
  'is',
  'it',
  'on',
  'gpu',
  'node',
  'job',
  'model',
  'token',
  'stream',
  'market',
  'network',
  'hello',
  'world',
  'deploy',
  'service',
  'solana',
  'compute',
  'run',
  'answer',
]

/** The vocabulary: <unk>, <s>, </s>, 256 byte-fallback tokens, printable ASCII, "▁x" pairs and a few words. */
export function buildVocabulary() {
  const tokens = ['<unk>', '<s>', '</s>']
  const types = [TOKEN.UNKNOWN, TOKEN.CONTROL, TOKEN.CONTROL]
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`)
    types.push(TOKEN.BYTE)
  }
  const seen = new Set()
  const add = (piece) => {
    if (seen.has(piece)) return
    seen.add(piece)
    tokens.push(piece)
    types.push(TOKEN.NORMAL)
  }
  add(SPACE)
  for (let c = 0x21; c < 0x7f; c++) add(String.fromCharCode(c))
  for (let c = 0x21; c < 0x7f; c++) if (/[A-Za-z0-9]/.test(String.fromCharCode(c))) add(SPACE + String.fromCharCode(c))
  // SentencePiece merges adjacent pieces only into pieces of the vocabulary, so every prefix of a word is one too.
  for (const word of WORDS) for (let n = 2; n <= word.length; n++) add(SPACE + word.slice(0, n))
  // A longer piece scores higher, so the tokenizer prefers whole words to letters.
  const scores = tokens.map((piece, id) => (types[id] === TOKEN.NORMAL ? piece.length : 0))
  return {tokens, types, scores, unk: 0, bos: 1, eos: 2}
}

/** A seeded pseudo-random number generator (mulberry32) returning floats in [-1, 1). */
function random(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1
  }
}

/** The model's tensors, named and shaped as llama.cpp's llama architecture expects (ggml order: ne0 first). */
export function buildTensors(vocabulary, seed) {
  const next = random(seed)
  const {embedding: d, feedForward: ff, blocks, heads, headsKv} = MODEL_SHAPE
  const kv = (d / heads) * headsKv
  const n = vocabulary.tokens.length
  const filled = (count, scale) => Float32Array.from({length: count}, () => next() * scale)
  const ones = (count) => new Float32Array(count).fill(1)
  const tensors = []
  // Every embedding shares a constant first component that the attention and feed-forward layers (small weights)
  // barely move, so the output projection can push the control and byte tokens' logits far down: the model then
  // answers in printable pieces (and until its token limit) instead of stray bytes or an early end of text.
  const embeddings = filled(n * d, 0.1)
  for (let t = 0; t < n; t++) embeddings[t * d] = 1
  tensors.push({name: 'token_embd.weight', dims: [d, n], data: embeddings})
  for (let b = 0; b < blocks; b++) {
    tensors.push({name: `blk.${b}.attn_norm.weight`, dims: [d], data: ones(d)})
    tensors.push({name: `blk.${b}.attn_q.weight`, dims: [d, d], data: filled(d * d, 0.05)})
    tensors.push({name: `blk.${b}.attn_k.weight`, dims: [d, kv], data: filled(d * kv, 0.05)})
    tensors.push({name: `blk.${b}.attn_v.weight`, dims: [d, kv], data: filled(d * kv, 0.05)})
    tensors.push({name: `blk.${b}.attn_output.weight`, dims: [d, d], data: filled(d * d, 0.02)})
    tensors.push({name: `blk.${b}.ffn_norm.weight`, dims: [d], data: ones(d)})
    tensors.push({name: `blk.${b}.ffn_gate.weight`, dims: [d, ff], data: filled(d * ff, 0.05)})
    tensors.push({name: `blk.${b}.ffn_up.weight`, dims: [d, ff], data: filled(d * ff, 0.05)})
    tensors.push({name: `blk.${b}.ffn_down.weight`, dims: [ff, d], data: filled(ff * d, 0.02)})
  }
  tensors.push({name: 'output_norm.weight', dims: [d], data: ones(d)})
  const output = filled(n * d, 0.3)
  for (let t = 0; t < n; t++) output[t * d] = vocabulary.types[t] === TOKEN.NORMAL ? 0 : -3
  tensors.push({name: 'output.weight', dims: [d, n], data: output})
  return tensors
}

/** The metadata llama.cpp reads for a llama model with a SentencePiece ("llama") tokenizer. */
export function buildMetadata(vocabulary) {
  const {contextLength, embedding, feedForward, blocks, heads, headsKv} = MODEL_SHAPE
  return [
    ['general.architecture', T.STRING, 'llama'],
    ['general.name', T.STRING, 'tiny-random-llama'],
    ['general.alignment', T.UINT32, ALIGNMENT],
    ['general.file_type', T.UINT32, 0], // all F32
    ['llama.context_length', T.UINT32, contextLength],
    ['llama.embedding_length', T.UINT32, embedding],
    ['llama.block_count', T.UINT32, blocks],
    ['llama.feed_forward_length', T.UINT32, feedForward],
    ['llama.attention.head_count', T.UINT32, heads],
    ['llama.attention.head_count_kv', T.UINT32, headsKv],
    ['llama.rope.dimension_count', T.UINT32, embedding / heads],
    ['llama.rope.freq_base', T.FLOAT32, 10000],
    ['llama.attention.layer_norm_rms_epsilon', T.FLOAT32, 1e-5],
    ['llama.vocab_size', T.UINT32, vocabulary.tokens.length],
    ['tokenizer.ggml.model', T.STRING, 'llama'],
    ['tokenizer.ggml.tokens', T.ARRAY, {type: T.STRING, values: vocabulary.tokens}],
    ['tokenizer.ggml.scores', T.ARRAY, {type: T.FLOAT32, values: vocabulary.scores}],
    ['tokenizer.ggml.token_type', T.ARRAY, {type: T.INT32, values: vocabulary.types}],
    ['tokenizer.ggml.unknown_token_id', T.UINT32, vocabulary.unk],
    ['tokenizer.ggml.bos_token_id', T.UINT32, vocabulary.bos],
    ['tokenizer.ggml.eos_token_id', T.UINT32, vocabulary.eos],
    ['tokenizer.ggml.add_bos_token', T.BOOL, true],
    ['tokenizer.ggml.add_eos_token', T.BOOL, false],
  ]
}

/** Appends little-endian GGUF values to a list of buffers. */
class Writer {
  constructor() {
    this.parts = []
    this.length = 0
  }
  push(buffer) {
    this.parts.push(buffer)
    this.length += buffer.length
  }
  u32(value) {
    const b = Buffer.alloc(4)
    b.writeUInt32LE(value)
    this.push(b)
  }
  i32(value) {
    const b = Buffer.alloc(4)
    b.writeInt32LE(value)
    this.push(b)
  }
  u64(value) {
    const b = Buffer.alloc(8)
    b.writeBigUInt64LE(BigInt(value))
    this.push(b)
  }
  f32(value) {
    const b = Buffer.alloc(4)
    b.writeFloatLE(value)
    this.push(b)
  }
  string(value) {
    const bytes = Buffer.from(value, 'utf8')
    this.u64(bytes.length)
    this.push(bytes)
  }
  value(type, value) {
    if (type === T.UINT32) this.u32(value)
    else if (type === T.INT32) this.i32(value)
    else if (type === T.FLOAT32) this.f32(value)
    else if (type === T.BOOL) this.push(Buffer.from([value ? 1 : 0]))
    else if (type === T.STRING) this.string(value)
    else if (type === T.ARRAY) {
      this.u32(value.type)
      this.u64(value.values.length)
      for (const item of value.values) this.value(value.type, item)
    } else throw new Error(`unsupported GGUF value type ${type}`)
  }
  pad() {
    const rest = this.length % ALIGNMENT
    if (rest) this.push(Buffer.alloc(ALIGNMENT - rest))
  }
}

/** The GGUF file's bytes for a seed: header, metadata, tensor infos, then the aligned F32 tensor data. */
export function encodeModel(seed = 1) {
  const vocabulary = buildVocabulary()
  const metadata = buildMetadata(vocabulary)
  const tensors = buildTensors(vocabulary, seed)
  const w = new Writer()
  w.push(Buffer.from('GGUF', 'ascii'))
  w.u32(GGUF_VERSION)
  w.u64(tensors.length)
  w.u64(metadata.length)
  for (const [key, type, value] of metadata) {
    w.string(key)
    w.u32(type)
    w.value(type, value)
  }
  let offset = 0
  for (const tensor of tensors) {
    w.string(tensor.name)
    w.u32(tensor.dims.length)
    for (const dim of tensor.dims) w.u64(dim)
    w.u32(GGML_TYPE_F32)
    w.u64(offset)
    offset += Math.ceil(tensor.data.byteLength / ALIGNMENT) * ALIGNMENT
  }
  w.pad()
  for (const tensor of tensors) {
    w.push(Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength))
    w.pad()
  }
  return Buffer.concat(w.parts, w.length)
}

/** Writes the model to `path` (through a temporary file, so a reader never sees half a model); returns its size. */
export function writeModel(path = DEFAULT_MODEL_PATH, seed = 1) {
  const bytes = encodeModel(seed)
  mkdirSync(dirname(path), {recursive: true})
  const partial = `${path}.${process.pid}.partial`
  writeFileSync(partial, bytes)
  renameSync(partial, path)
  return bytes.length
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const {values} = parseArgs({
    options: {out: {type: 'string'}, seed: {type: 'string', default: '1'}, help: {type: 'boolean'}},
  })
  if (values.help) {
    console.log('usage: node write-model.js [--out PATH] [--seed N]\n  default PATH: ' + DEFAULT_MODEL_PATH)
    process.exit(0)
  }
  const seed = Number(values.seed)
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    console.error(`error: --seed must be an integer from 0 to 4294967295, got ${JSON.stringify(values.seed)}`)
    process.exit(2)
  }
  const path = resolve(values.out ?? process.env.MODEL_PATH ?? DEFAULT_MODEL_PATH)
  const size = writeModel(path, seed)
  console.log(`wrote ${path} (${Math.round(size / 1024)} KB, seed ${seed})`)
}
