/**
 * The content store's multipart reader (issue 42, finding 3): what fetch's FormData sends is read part for part,
 * an upload past MAX_PARTS is refused before any part is parsed, and the loop is yielded to between parts.
 */
import {strict as assert} from 'node:assert'

import {boundaryOf, countParts, MAX_PARTS, MultipartError, readFormFiles} from '../../../src/lib/ipfs/multipart.js'

/** A body as fetch encodes `form`, and its content type. */
async function encoded(form: FormData): Promise<{body: Buffer; type: string}> {
  const request = new Request('http://localhost/', {method: 'POST', body: form})
  return {body: Buffer.from(await request.arrayBuffer()), type: request.headers.get('content-type')!}
}

/** A body of `parts` parts written by hand, the first with `firstHeaders`. */
function handMade(parts: number, firstHeaders = 'content-disposition: form-data; name="file"; filename="f"'): Buffer {
  const chunks = [`--B\r\n${firstHeaders}\r\n\r\nx\r\n`]
  for (let i = 1; i < parts; i++)
    chunks.push(`--B\r\ncontent-disposition: form-data; name="file"; filename="f${i}"\r\n\r\n${i}\r\n`)
  chunks.push('--B--\r\n')
  return Buffer.from(chunks.join(''))
}

const refusal = (status: number, pattern: RegExp) => (error: unknown) => {
  assert.ok(error instanceof MultipartError)
  assert.equal(error.status, status)
  assert.match(error.message, pattern)
  return true
}

describe('multipart uploads', () => {
  it("reads what fetch's FormData sends: files with their names and bytes, text fields skipped", async () => {
    const form = new FormData()
    form.append('file', new Blob(['hello\r\n--not a boundary\r\n']), 'job "1".json')
    form.append('note', 'a text field')
    form.append('file', new Blob([new Uint8Array([0, 255, 13, 10])]), 'bytes.bin')
    form.append('file', new Blob([]), 'empty')
    const {body, type} = await encoded(form)
    const files = await readFormFiles(body, type)
    assert.deepEqual(
      files.map((f) => [f.field, f.filename, Buffer.from(f.bytes).toString('hex')]),
      [
        ['file', 'job "1".json', Buffer.from('hello\r\n--not a boundary\r\n').toString('hex')],
        ['file', 'bytes.bin', '00ff0d0a'],
        ['file', 'empty', ''],
      ],
    )
  })

  it(`takes ${MAX_PARTS} parts, and refuses ${MAX_PARTS + 1} before parsing any (its first part is malformed)`, async () => {
    assert.equal((await readFormFiles(handMade(MAX_PARTS), 'multipart/form-data; boundary=B')).length, MAX_PARTS)
    // Were any part parsed before the count, the malformed first part would answer 400.
    const bomb = handMade(MAX_PARTS + 1, 'no-disposition: here')
    await assert.rejects(readFormFiles(bomb, 'multipart/form-data; boundary=B'), refusal(413, /at most 100 parts/))
    await assert.rejects(
      readFormFiles(handMade(1, 'no-disposition: here'), 'multipart/form-data; boundary=B'),
      refusal(400, /multipart/),
    )
  })

  it('counts 100,000 parts no further than the limit', () => {
    const bomb = handMade(100_000)
    assert.equal(countParts(bomb, 'B'), MAX_PARTS + 1)
    assert.equal(countParts(handMade(3), 'B'), 3)
  })

  it('yields to the loop between parts', async () => {
    // A callback queued on the loop's check phase runs only if the reader gives the loop a turn: counted without a
    // clock (a timer of 0 ms need not fire while a fast machine reads 50 parts).
    let turns = 0
    let reading = true
    const turn = () => {
      if (!reading) return
      turns++
      setImmediate(turn)
    }
    setImmediate(turn)
    await readFormFiles(handMade(50), 'multipart/form-data; boundary=B')
    reading = false
    assert.ok(turns >= 10, `the loop had ${turns} turns while 50 parts were read`)
  })

  it('refuses what is not a multipart form: 400', async () => {
    for (const [body, type] of [
      ['--B\r\n', 'multipart/form-data; boundary=B'],
      ['no delimiter at all', 'multipart/form-data; boundary=B'],
      ['--B\r\ncontent-disposition: form-data; name="f"\r\n\r\nunterminated', 'multipart/form-data; boundary=B'],
      ['--Bxx\r\n', 'multipart/form-data; boundary=B'],
      [handMade(1).toString(), 'application/json'],
      [handMade(1).toString(), 'multipart/form-data'],
      [handMade(1).toString(), undefined],
    ] as const) {
      await assert.rejects(readFormFiles(Buffer.from(body), type), refusal(400, /multipart/), `${body} as ${type}`)
    }
  })

  it('reads the boundary from the content type, quoted or not', () => {
    assert.equal(boundaryOf('multipart/form-data; boundary=abc'), 'abc')
    assert.equal(boundaryOf('Multipart/Form-Data; charset=utf-8; boundary="a b:c"'), 'a b:c')
    assert.equal(boundaryOf('multipart/mixed; boundary=abc'), null)
    assert.equal(boundaryOf(`multipart/form-data; boundary=${'x'.repeat(71)}`), null)
  })
})
