/**
 * The content store's reader of `multipart/form-data` uploads (RFC 7578), in time linear in the body and without
 * holding the loop: the parts are counted first with native searches alone (an upload of 100,000 parts once
 * froze the localnet 17 s and wrote 100,000 files), and the loop is yielded to between parts. Each part is a view
 * of the body, never a copy.
 */
import {setImmediate as yieldToLoop} from 'node:timers/promises'

/** Most parts one upload may hold: the network's clients send one file (`ipfs add`, Pinata's pinFileToIPFS). */
export const MAX_PARTS = 100
/** Longest header section of one part. */
const MAX_PART_HEADERS = 8 * 1024

/** A part of the form that carries a file name (a part without one is a text field, and is skipped). */
export interface FormFile {
  field: string
  filename: string
  bytes: Uint8Array
}

/** An upload refused: 400 for one that is not multipart/form-data, 413 for one past MAX_PARTS. */
export class MultipartError extends Error {
  constructor(
    readonly status: 400 | 413,
    message: string,
  ) {
    super(message)
  }
}

/** The boundary of a `multipart/form-data` content type; null for any other type. */
export function boundaryOf(contentType: string | undefined): string | null {
  const [type, ...params] = (contentType ?? '').split(';').map((p) => p.trim())
  if (type?.toLowerCase() !== 'multipart/form-data') return null
  for (const param of params) {
    const match = /^boundary=(?:"([^"]{1,70})"|([^\s";]{1,70}))$/i.exec(param)
    if (match) return match[1] ?? match[2]!
  }
  return null
}

/** Delimiters of `boundary` in `body`, counted with native searches alone and no further than `limit + 1`. */
export function countParts(body: Buffer, boundary: string, limit = MAX_PARTS): number {
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  let count = body.subarray(0, boundary.length + 2).equals(Buffer.from(`--${boundary}`)) ? 1 : 0
  for (let at = body.indexOf(delimiter); at !== -1 && count <= limit + 1; at = body.indexOf(delimiter, at + 1)) count++
  // The last delimiter closes the form (`--boundary--`): it opens no part.
  return Math.max(0, count - 1)
}

/** The files of an upload, refusing one past MAX_PARTS before any part is read; yields to the loop between parts. */
export async function readFormFiles(body: Buffer, contentType: string | undefined): Promise<FormFile[]> {
  const boundary = boundaryOf(contentType)
  if (boundary === null) throw new MultipartError(400, 'expected a multipart/form-data body with a file')
  const parts = countParts(body, boundary)
  if (parts > MAX_PARTS) throw new MultipartError(413, `an upload holds at most ${MAX_PARTS} parts`)
  const malformed = () => new MultipartError(400, 'expected a multipart/form-data body with a file')
  const opening = Buffer.from(`--${boundary}`)
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  let at = body.subarray(0, opening.length).equals(opening) ? 0 : body.indexOf(delimiter) + 2
  if (at < 0 || at === 1) throw malformed()
  const files: FormFile[] = []
  for (;;) {
    at += opening.length
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return files
    // Transport padding (spaces, tabs) may follow a delimiter before its line ends.
    while (body[at] === 0x20 || body[at] === 0x09) at++
    if (body[at] !== 0x0d || body[at + 1] !== 0x0a) throw malformed()
    const headersEnd = body.indexOf('\r\n\r\n', at + 2)
    if (headersEnd === -1 || headersEnd - at > MAX_PART_HEADERS) throw malformed()
    const next = body.indexOf(delimiter, headersEnd + 4)
    if (next === -1) throw malformed()
    const disposition = dispositionOf(body.toString('utf8', at + 2, headersEnd))
    if (!disposition) throw malformed()
    if (disposition.filename !== undefined) {
      files.push({field: disposition.name, filename: disposition.filename, bytes: body.subarray(headersEnd + 4, next)})
    }
    at = next + 2
    await yieldToLoop()
  }
}

/** The `name` and `filename` of a part's Content-Disposition header; null without one. */
function dispositionOf(headers: string): {name: string; filename?: string} | null {
  const line = headers.split('\r\n').find((h) => /^content-disposition\s*:/i.test(h))
  if (!line || !/:\s*form-data\s*(;|$)/i.test(line)) return null
  const params = new Map<string, string>()
  for (const match of line.matchAll(/;\s*([a-z*]+)\s*=\s*(?:"([^"]*)"|([^;\s]*))/gi)) {
    // As browsers write a quoted name (the HTML standard's form encoding): quote, CR and LF percent-encoded.
    const value =
      match[2] !== undefined
        ? match[2].replace(/%(22|0D|0A)/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
        : match[3]!
    params.set(match[1]!.toLowerCase(), value)
  }
  const name = params.get('name')
  if (name === undefined) return null
  const filename = params.get('filename')
  return filename === undefined ? {name} : {name, filename}
}
