import {strict as assert} from 'node:assert'
import {readdirSync} from 'node:fs'
import {join} from 'node:path'

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

describe('localnet content store against a multipart bomb (issue 42)', function () {
  this.timeout(60_000)
  const t = useLocalnet({contentMaxBytes: 4096})

  /** A body of `parts` one-byte files, each a distinct part. */
  function bomb(parts: number): Buffer {
    const chunks: string[] = []
    for (let i = 0; i < parts; i++)
      chunks.push(`--B\r\ncontent-disposition: form-data; name="file"; filename="f${i}"\r\n\r\n${i % 10}\r\n`)
    chunks.push('--B--\r\n')
    return Buffer.from(chunks.join(''))
  }

  const upload = (body: Buffer, path = '/api/v0/add', headers: Record<string, string> = {}) =>
    fetch(`${t.ln.runtime.contentStoreUrl}${path}`, {
      method: 'POST',
      headers: {'content-type': 'multipart/form-data; boundary=B', ...headers},
      body: new Uint8Array(body),
    })

  it('refuses 100,000 parts with 413 before storing any, and answers RPC right after', async () => {
    const content = t.ln.node.content
    const add = content.add.bind(content)
    let adds = 0
    content.add = (bytes) => {
      adds++
      return add(bytes)
    }
    try {
      const files = () => readdirSync(join(t.dataDir, 'ipfs')).length
      const before = files()
      for (const path of ['/api/v0/add', '/pinning/pinFileToIPFS']) {
        const res = await upload(bomb(100_000), path, {authorization: 'Bearer x'})
        assert.equal(res.status, 413, path)
        assert.match(await res.text(), /at most 100 parts/)
      }
      assert.equal(adds, 0, 'nothing reached the store')
      assert.equal(files(), before, 'no file written')
      const health = await fetch(t.ln.runtime.rpcUrl, {
        method: 'POST',
        headers: {'content-type': 'application/json'},
        body: '{"jsonrpc":"2.0","id":1,"method":"getHealth"}',
      })
      assert.equal(((await health.json()) as {result: string}).result, 'ok')
    } finally {
      content.add = add
    }
  })

  it('stores up to its disk use and answers 507 past it (localnet start --content-max-bytes)', async () => {
    const files = (size: number, fill: string) => {
      const form = new FormData()
      form.append('file', new Blob([fill.repeat(size)]), 'f')
      return form
    }
    const add = (form: FormData) => fetch(`${t.ln.runtime.contentStoreUrl}/api/v0/add`, {method: 'POST', body: form})
    assert.equal((await add(files(3000, 'a'))).status, 200)
    const full = await add(files(3000, 'b'))
    assert.equal(full.status, 507)
    assert.match(((await full.json()) as {Message: string}).Message, /at most 4096 bytes/)
    const pinned = await fetch(`${t.ln.runtime.contentStoreUrl}/pinning/pinJSONToIPFS`, {
      method: 'POST',
      headers: {'content-type': 'application/json', authorization: 'Bearer x'},
      body: JSON.stringify({big: 'c'.repeat(3000)}),
    })
    assert.equal(pinned.status, 507)
    assert.equal(((await pinned.json()) as {error: {reason: string}}).error.reason, 'STORAGE_FULL')
  })
})
