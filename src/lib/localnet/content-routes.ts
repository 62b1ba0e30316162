/** The IPFS HTTP API subset the client needs: `POST /api/v0/add` (multipart) and the gateway `GET /ipfs/<cid>`. */
import type {IncomingMessage, ServerResponse} from 'node:http'

import type {ContentStore} from '../ipfs/store.js'
import {readBody, sendJson, sendTooLarge, type SubService} from './http.js'

/** Largest upload the content store accepts. */
const MAX_UPLOAD = 64 * 1024 * 1024

/** The content store mounted on the localnet's HTTP port. */
export function contentService(store: ContentStore): SubService {
  return {
    name: 'content',
    matches: (path) => path === '/api/v0/add' || path.startsWith('/ipfs/'),
    handle: (req, res, path) => (path === '/api/v0/add' ? add(store, req, res) : get(store, req, res, path)),
  }
}

async function add(store: ContentStore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') return sendJson(res, 405, {Message: 'add takes a POST', Code: 0, Type: 'error'})
  const body = await readBody(req, MAX_UPLOAD)
  if (body === null) {
    return sendTooLarge(req, res, {Message: `upload larger than ${MAX_UPLOAD} bytes`, Code: 0, Type: 'error'})
  }
  let form: FormData
  try {
    // Node's fetch Request parses multipart/form-data as browsers do.
    form = await new Request('http://localhost/', {
      method: 'POST',
      headers: {'content-type': req.headers['content-type'] ?? ''},
      body: new Uint8Array(body),
    }).formData()
  } catch {
    return sendJson(res, 400, {Message: 'expected a multipart/form-data body with a file', Code: 0, Type: 'error'})
  }
  const files = [...form.values()].filter((v): v is File => typeof v !== 'string')
  if (files.length === 0)
    return sendJson(res, 400, {Message: "file argument 'path' is required", Code: 1, Type: 'error'})
  // `ipfs add` answers one JSON object per file, one per line.
  const lines: string[] = []
  for (const file of files) {
    const {cid, size} = store.add(new Uint8Array(await file.arrayBuffer()))
    lines.push(JSON.stringify({Name: file.name || cid, Hash: cid, Size: String(size)}))
  }
  res.writeHead(200, {'content-type': 'application/json'})
  res.end(`${lines.join('\n')}\n`)
}

function get(store: ContentStore, req: IncomingMessage, res: ServerResponse, path: string): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, {error: 'the gateway takes GET'})
  let cid: string
  try {
    cid = decodeURIComponent(path.slice('/ipfs/'.length).replace(/\/+$/, ''))
  } catch {
    return sendJson(res, 400, {error: 'the path is not valid percent-encoding'})
  }
  const bytes = store.get(cid)
  if (!bytes) {
    res.writeHead(404, {'content-type': 'text/plain'})
    res.end(`ipfs resolve -r /ipfs/${cid}: not found in the localnet content store\n`)
    return
  }
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': bytes.length,
    etag: `"${cid}"`,
    'cache-control': 'public, max-age=29030400, immutable',
    'x-ipfs-path': `/ipfs/${cid}`,
  })
  res.end(req.method === 'HEAD' ? undefined : bytes)
}
