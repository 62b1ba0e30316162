/** The content store as the network's clients use a gateway and a pinning service (issue 21, item 4). */
import {strict as assert} from 'node:assert'

import {useLocalnet} from '../../helpers/localnet.js'
import {ipfsCid} from '../../helpers/standin.js'

describe('localnet content store: pinning API and content types', function () {
  this.timeout(30_000)
  const t = useLocalnet()
  const url = (path: string) => `${t.ln.runtime.contentStoreUrl}${path}`
  const bearer = {authorization: 'Bearer any-token-will-do'}

  it('pins a JSON document with pinJSONToIPFS: the CIDv0 of the bytes sent, served back as application/json', async () => {
    const body = JSON.stringify({version: '0.1', type: 'container', ops: []})
    const res = await fetch(url('/pinning/pinJSONToIPFS'), {
      method: 'POST',
      headers: {...bearer, 'content-type': 'application/json'},
      body,
    })
    assert.equal(res.status, 200)
    const answer = (await res.json()) as {IpfsHash: string; PinSize: number; Timestamp: string}
    assert.equal(answer.IpfsHash, await ipfsCid(new TextEncoder().encode(body)))
    assert.ok(!Number.isNaN(Date.parse(answer.Timestamp)))
    const got = await fetch(url(`/ipfs/${answer.IpfsHash}`))
    assert.equal(got.headers.get('content-type'), 'application/json')
    assert.equal(await got.text(), body)
  })

  it("stores a pinataContent wrapper's document alone", async () => {
    const content = {hello: 'world'}
    const res = await fetch(url('/pinning/pinJSONToIPFS'), {
      method: 'POST',
      headers: {...bearer, 'content-type': 'application/json'},
      body: JSON.stringify({pinataContent: content, pinataMetadata: {name: 'x'}}),
    })
    const {IpfsHash} = (await res.json()) as {IpfsHash: string}
    assert.equal(IpfsHash, await ipfsCid(new TextEncoder().encode(JSON.stringify(content))))
  })

  it('pins a file with pinFileToIPFS; bytes that are not JSON are served as application/octet-stream', async () => {
    const bytes = new Uint8Array([0, 1, 2, 255, 123])
    const form = new FormData()
    form.append('file', new Blob([bytes]), 'blob.bin')
    form.append('pinataOptions', JSON.stringify({cidVersion: 0}))
    const res = await fetch(url('/pinning/pinFileToIPFS'), {method: 'POST', headers: bearer, body: form})
    assert.equal(res.status, 200)
    const {IpfsHash} = (await res.json()) as {IpfsHash: string}
    assert.equal(IpfsHash, await ipfsCid(bytes))
    const got = await fetch(url(`/ipfs/${IpfsHash}`))
    assert.equal(got.headers.get('content-type'), 'application/octet-stream')
    assert.deepEqual(new Uint8Array(await got.arrayBuffer()), bytes)
  })

  it('serves JSON added through /api/v0/add as application/json too, and text that only looks like it as bytes', async () => {
    for (const [text, type] of [
      ['{"a": [1, 2]}', 'application/json'],
      ['[1, 2', 'application/octet-stream'],
      ['hello', 'application/octet-stream'],
    ] as const) {
      const form = new FormData()
      form.append('file', new Blob([text]), 'f')
      const {Hash} = (await (await fetch(url('/api/v0/add'), {method: 'POST', body: form})).json()) as {Hash: string}
      assert.equal((await fetch(url(`/ipfs/${Hash}`))).headers.get('content-type'), type, text)
    }
  })

  it('refuses a pin without a bearer token (401), a body that is not JSON (400) or not typed JSON (415)', async () => {
    const none = await fetch(url('/pinning/pinJSONToIPFS'), {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: '{}',
    })
    assert.equal(none.status, 401)
    assert.equal(((await none.json()) as {error: {reason: string}}).error.reason, 'NO_AUTH')
    const bad = await fetch(url('/pinning/pinJSONToIPFS'), {
      method: 'POST',
      headers: {...bearer, 'content-type': 'application/json'},
      body: '{not json',
    })
    assert.equal(bad.status, 400)
    const text = await fetch(url('/pinning/pinJSONToIPFS'), {
      method: 'POST',
      headers: {...bearer, 'content-type': 'text/plain'},
      body: '{}',
    })
    assert.equal(text.status, 415)
    const twoFiles = new FormData()
    twoFiles.append('file', new Blob(['a']), 'a')
    twoFiles.append('file', new Blob(['b']), 'b')
    const two = await fetch(url('/pinning/pinFileToIPFS'), {method: 'POST', headers: bearer, body: twoFiles})
    assert.equal(two.status, 400)
    const get = await fetch(url('/pinning/pinFileToIPFS'), {headers: bearer})
    assert.equal(get.status, 405)
  })
})
