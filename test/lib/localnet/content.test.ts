import {strict as assert} from 'node:assert'

import {computeCidV0} from '../../../src/lib/ipfs/cid.js'
import {useLocalnet} from '../../helpers/localnet.js'

describe('localnet content store over the IPFS HTTP API', function () {
  this.timeout(30_000)
  const t = useLocalnet()

  it('adds a file with POST /api/v0/add and serves it at /ipfs/<cid>', async () => {
    const body = new FormData()
    body.append('file', new Blob(['hello world\n']), 'job.json')
    const res = await fetch(`${t.ln.runtime.contentStoreUrl}/api/v0/add`, {method: 'POST', body})
    assert.equal(res.status, 200)
    assert.deepEqual(await res.json(), {
      Name: 'job.json',
      Hash: 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o',
      Size: '20',
    })
    const got = await fetch(`${t.ln.runtime.contentStoreUrl}/ipfs/QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o`)
    assert.equal(got.status, 200)
    assert.equal(await got.text(), 'hello world\n')
  })

  it('answers one line per file for several files', async () => {
    const body = new FormData()
    body.append('file', new Blob(['a']), 'a')
    body.append('file', new Blob(['b']), 'b')
    const lines = (await (await fetch(`${t.ln.runtime.contentStoreUrl}/api/v0/add`, {method: 'POST', body})).text())
      .trim()
      .split('\n')
    assert.deepEqual(
      lines.map((l) => (JSON.parse(l) as {Hash: string}).Hash),
      [computeCidV0(Buffer.from('a')).cid, computeCidV0(Buffer.from('b')).cid],
    )
  })

  it('refuses an add without a file and answers 404 for unknown content', async () => {
    const empty = await fetch(`${t.ln.runtime.contentStoreUrl}/api/v0/add`, {method: 'POST', body: new FormData()})
    assert.equal(empty.status, 400)
    const missing = await fetch(`${t.ln.runtime.contentStoreUrl}/ipfs/Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD`)
    assert.equal(missing.status, 404)
  })
})
