import {strict as assert} from 'node:assert'
import {readdirSync} from 'node:fs'

import {computeCidV0, computeCidV0Yielding} from '../../../src/lib/ipfs/cid.js'
import {ContentStore, ContentStoreFullError} from '../../../src/lib/ipfs/store.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {ipfsCid} from '../../helpers/standin.js'

/** Deterministic bytes that do not repeat within a chunk. */
function pattern(n: number): Uint8Array {
  const bytes = new Uint8Array(n)
  for (let i = 0; i < n; i++) bytes[i] = (i * 7 + (i >> 9)) % 251
  return bytes
}
const CHUNK = 262_144

/** CIDs of pattern(size), computed with ipfs-unixfs-importer (profile unixfs-v0-2015, the `ipfs add` defaults). */
const VECTORS: [number, string][] = [
  [CHUNK, 'QmS2NeCKcxdWANo2x82qb7svzbEDKDhNQKi8owHVtaJGZS'],
  [CHUNK + 1, 'QmfDiwNsAkasY6jK1BvHLBi8SdBVciC4wTp2js2ToG9bYf'],
  [600 * 1024, 'QmT7nMtdy8M1P5VrWM3m2fvYdBLDjxEgJbj1EcNqGtrnWC'],
  [174 * CHUNK, 'QmNhBdDwMtwUTusm74PbieoLGbZhdWyWj8FW74rbJHHcU5'],
  [174 * CHUNK + 1, 'QmV1KcY3qNTVMM2HcFamLByhKe93gNzwwZRy5geNF5LvmZ'],
  [175 * CHUNK + 12_345, 'QmRX3JbBt8p8b5Cqxj2cpE233fyYSXsHeqxt1JVw1e1HGW'],
]

describe('CIDv0 as ipfs add computes it', () => {
  it('matches the CIDs and sizes go-ipfs gives for small files', () => {
    assert.deepEqual(computeCidV0(Buffer.from('hello world')), {
      cid: 'Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD',
      size: 19,
    })
    assert.deepEqual(computeCidV0(Buffer.from('hello world\n')), {
      cid: 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o',
      size: 20,
    })
    assert.equal(computeCidV0(new Uint8Array()).cid, 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH')
  })

  it('gives a larger file a DAG of 256 KiB chunks whose size covers every block', () => {
    const bytes = Buffer.alloc(600 * 1024, 1)
    const {cid, size} = computeCidV0(bytes)
    assert.match(cid, /^Qm/)
    // three leaves (256 + 256 + 88 KiB) each carry a little protobuf framing; the DAG size covers all blocks
    assert.ok(size > bytes.length && size < bytes.length + 400, String(size))
    assert.notEqual(cid, computeCidV0(bytes.subarray(1)).cid)
  })

  it('equals the CIDs of the IPFS libraries for multi-chunk files: over 256 KiB, and over 174 chunks (two levels)', () => {
    for (const [size, cid] of VECTORS) assert.equal(computeCidV0(pattern(size)).cid, cid, `${size} bytes`)
  })

  it('agrees with ipfs-unixfs-importer computed now, across the chunk and link boundaries', async function () {
    this.timeout(60_000)
    for (const size of [CHUNK - 1, CHUNK, 3 * CHUNK + 5, 174 * CHUNK + 1]) {
      const bytes = pattern(size).map((b) => b ^ 0x5a)
      assert.equal(computeCidV0(bytes).cid, await ipfsCid(bytes), `${size} bytes`)
    }
  })
})

describe('content store', () => {
  it('stores bytes under their CID and returns them', async () => {
    const dir = tempDir()
    try {
      const store = new ContentStore(dir)
      const {cid} = await store.add(Buffer.from('{"version":"0.1"}'))
      assert.equal(store.get(cid)?.toString(), '{"version":"0.1"}')
      assert.equal(store.get('QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o'), null)
      assert.equal(store.get('../../etc/passwd'), null)
    } finally {
      removeDir(dir)
    }
  })

  it('refuses bytes past its disk use, counting the files it found at start, and stores each CID once', async () => {
    const dir = tempDir()
    try {
      const first = new ContentStore(dir, 100)
      await first.add(Buffer.alloc(60, 1))
      const store = new ContentStore(dir, 100)
      await assert.rejects(store.add(Buffer.alloc(41, 2)), (error: Error) => {
        assert.ok(error instanceof ContentStoreFullError)
        assert.match(error.message, /at most 100 bytes/)
        return true
      })
      // The same bytes again take no room; 40 more fit exactly.
      await store.add(Buffer.alloc(60, 1))
      const [a, b] = await Promise.all([store.add(Buffer.alloc(40, 3)), store.add(Buffer.alloc(40, 3))])
      assert.equal(a.cid, b.cid)
      assert.deepEqual(readdirSync(dir).sort(), [a.cid, computeCidV0(Buffer.alloc(60, 1)).cid].sort())
      await assert.rejects(store.add(Buffer.alloc(1, 4)), ContentStoreFullError)
    } finally {
      removeDir(dir)
    }
  })

  it('computes the same CID in steps that yield to the loop as in one go', async () => {
    for (const size of [0, 1, 262_144, 262_145, 16 * 262_144, 16 * 262_144 + 1, 175 * 262_144 + 3]) {
      const bytes = pattern(size)
      // Counted in loop turns (check-phase callbacks), not by a timer that a fast machine need not fire.
      let turns = 0
      let hashing = true
      const turn = () => {
        if (!hashing) return
        turns++
        setImmediate(turn)
      }
      setImmediate(turn)
      const yielded = await computeCidV0Yielding(bytes)
      hashing = false
      assert.deepEqual(yielded, computeCidV0(bytes), `${size} bytes`)
      if (size > 16 * 262_144) assert.ok(turns > 0, `${size} bytes: other work ran meanwhile`)
    }
  })
})
