/**
 * The content store's HTTP side, as the network's clients use one: the IPFS HTTP API's `POST /api/v0/add`
 * (multipart), the pinning API of Pinata (`POST /pinning/pinJSONToIPFS` and `/pinning/pinFileToIPFS`, any bearer
 * token on a localnet), and the gateway `GET /ipfs/<cid>`, which serves JSON as `application/json` as gateways do.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'

import {type FormFile, MultipartError, readFormFiles} from '../../ipfs/multipart.js'
import {type ContentStore, ContentStoreFullError} from '../../ipfs/store.js'
import {isJsonContentType} from '../../http/loopback-guard.js'
import {readBody, sendJson, sendTooLarge, type SubService} from '../http.js'

/** Largest upload the content store accepts. */
const MAX_UPLOAD = 64 * 1024 * 1024

/** Content up to this size is looked at to tell JSON from other bytes; larger content is served as bytes. */
const MAX_JSON_SNIFF = 16 * 1024 * 1024

const PIN_JSON = '/pinning/pinJSONToIPFS'
const PIN_FILE = '/pinning/pinFileToIPFS'

/** The content store mounted on the localnet's HTTP port. */
export function contentService(store: ContentStore): SubService {
  return {
    name: 'content',
    matches: (path) => path === '/api/v0/add' || path === PIN_JSON || path === PIN_FILE || path.startsWith('/ipfs/'),
    handle: (req, res, path) =>
      path === '/api/v0/add'
        ? add(store, req, res)
        : path === PIN_JSON || path === PIN_FILE
          ? pin(store, req, res, path)
          : get(store, req, res, path),
  }
}

/** Reads a multipart body's files; null (after answering 400 or 413 with `error`'s shape) when there are none. */
async function formFiles(
  req: IncomingMessage,
  res: ServerResponse,
  error: (message: string) => object,
): Promise<FormFile[] | null> {
  const body = await readBody(req, MAX_UPLOAD)
  if (body === null) {
    sendTooLarge(req, res, error(`upload larger than ${MAX_UPLOAD} bytes`))
    return null
  }
  try {
    return await readFormFiles(body, req.headers['content-type'])
  } catch (failure) {
    if (!(failure instanceof MultipartError)) throw failure
    sendJson(res, failure.status, error(failure.message))
    return null
  }
}

/** Stores the bytes; null (after answering 507 with `error`'s shape) when the store is full. */
async function stored(
  store: ContentStore,
  res: ServerResponse,
  bytes: Uint8Array,
  error: (message: string) => object,
): Promise<{cid: string; size: number} | null> {
  try {
    return await store.add(bytes)
  } catch (failure) {
    if (!(failure instanceof ContentStoreFullError)) throw failure
    sendJson(res, 507, error(failure.message))
    return null
  }
}

async function add(store: ContentStore, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const error = (message: string) => ({Message: message, Code: 0, Type: 'error'})
  if (req.method !== 'POST') return sendJson(res, 405, error('add takes a POST'))
  const files = await formFiles(req, res, error)
  if (files === null) return
  if (files.length === 0)
    return sendJson(res, 400, {Message: "file argument 'path' is required", Code: 1, Type: 'error'})
  // `ipfs add` answers one JSON object per file, one per line.
  const lines: string[] = []
  for (const file of files) {
    const added = await stored(store, res, file.bytes, error)
    if (!added) return
    lines.push(JSON.stringify({Name: file.filename || added.cid, Hash: added.cid, Size: String(added.size)}))
  }
  res.writeHead(200, {'content-type': 'application/json'})
  res.end(`${lines.join('\n')}\n`)
}

/**
 * Pinata's pinning API: a JSON document (`pinJSONToIPFS`, the body itself or its `pinataContent`) or one file
 * (`pinFileToIPFS`, multipart `file`), stored as sent; answers `{IpfsHash, PinSize, Timestamp}` with its CIDv0.
 * Any bearer token is taken, as a localnet has no accounts; a request without one is refused as Pinata does.
 */
async function pin(store: ContentStore, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const error = (reason: string, details: string) => ({error: {reason, details}})
  if (req.method !== 'POST') return sendJson(res, 405, error('METHOD_NOT_ALLOWED', 'pinning takes a POST'))
  if (!/^Bearer \S+$/i.test(req.headers.authorization ?? '')) {
    return sendJson(res, 401, error('NO_AUTH', 'send Authorization: Bearer <JWT> (any token on a localnet)'))
  }
  let bytes: Uint8Array
  if (path === PIN_FILE) {
    const files = await formFiles(req, res, (message) => error('INVALID_REQUEST', message))
    if (files === null) return
    if (files.length !== 1) return sendJson(res, 400, error('INVALID_REQUEST', 'send exactly one file, as `file`'))
    bytes = files[0]!.bytes
  } else {
    if (!isJsonContentType(req.headers['content-type'])) {
      req.resume()
      return sendJson(res, 415, error('INVALID_REQUEST', 'pinJSONToIPFS takes content-type application/json'))
    }
    const body = await readBody(req, MAX_UPLOAD)
    if (body === null) return sendTooLarge(req, res, error('PAYLOAD_TOO_LARGE', `larger than ${MAX_UPLOAD} bytes`))
    let value: unknown
    try {
      value = JSON.parse(body.toString('utf8'))
    } catch {
      return sendJson(res, 400, error('INVALID_REQUEST', 'the body is not JSON'))
    }
    const wrapped = typeof value === 'object' && value !== null && 'pinataContent' in value
    // The document alone is stored (the SDK sends it bare); Pinata's wrapper keeps its metadata apart.
    bytes = wrapped
      ? new TextEncoder().encode(JSON.stringify((value as {pinataContent: unknown}).pinataContent))
      : new Uint8Array(body)
  }
  const added = await stored(store, res, bytes, (message) => error('STORAGE_FULL', message))
  if (added) sendJson(res, 200, {IpfsHash: added.cid, PinSize: added.size, Timestamp: new Date().toISOString()})
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
    'content-type': isJson(bytes) ? 'application/json' : 'application/octet-stream',
    'content-length': bytes.length,
    etag: `"${cid}"`,
    'cache-control': 'public, max-age=29030400, immutable',
    'x-ipfs-path': `/ipfs/${cid}`,
  })
  res.end(req.method === 'HEAD' ? undefined : bytes)
}

/** Whether content is a JSON document, which gateways serve as `application/json` (clients parse only those). */
function isJson(bytes: Uint8Array): boolean {
  if (bytes.length === 0 || bytes.length > MAX_JSON_SNIFF) return false
  const text = new TextDecoder('utf-8', {fatal: false}).decode(bytes.subarray(0, 64)).trimStart()
  if (!text.startsWith('{') && !text.startsWith('[')) return false
  try {
    JSON.parse(new TextDecoder('utf-8', {fatal: true}).decode(bytes))
    return true
  } catch {
    return false
  }
}
