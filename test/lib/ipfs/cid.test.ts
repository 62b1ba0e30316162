import {strict as assert} from 'node:assert'

import {computeCidV0} from '../../../src/lib/ipfs/cid.js'
import {ContentStore} from '../../../src/lib/ipfs/store.js'
import {removeDir, tempDir} from '../../helpers/localnet.js'

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
})

describe('content store', () => {
  it('stores bytes under their CID and returns them', () => {
    const dir = tempDir()
    try {
      const store = new ContentStore(dir)
      const {cid} = store.add(Buffer.from('{"version":"0.1"}'))
      assert.equal(store.get(cid)?.toString(), '{"version":"0.1"}')
      assert.equal(store.get('QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o'), null)
      assert.equal(store.get('../../etc/passwd'), null)
    } finally {
      removeDir(dir)
    }
  })
})
