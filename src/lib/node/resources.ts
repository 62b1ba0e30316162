/**
 * An operation's `resources`: external data (S3 objects, Hugging Face repository files) the node downloads into
 * a host folder before the operation starts, and the runtime mounts read-only at the resource's `target`.
 */
import {createHash, createHmac} from 'node:crypto'
import {createWriteStream} from 'node:fs'
import {mkdir, mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {dirname, join, posix, resolve, sep} from 'node:path'
import {Readable, Transform} from 'node:stream'
import {pipeline} from 'node:stream/promises'
import type {ReadableStream as WebReadableStream} from 'node:stream/web'

import type {Resource} from '../definition/schema.js'
import {GpunetError} from '../errors.js'
import {describeHttpFailure, httpFetch, type Response} from '../http.js'

/** Bytes one resource may download at most (all its files together), unless the node sets its own cap. */
export const DEFAULT_RESOURCE_MAX_BYTES = 20 * 1024 ** 3

/** How long one resource may take to download, all files together. */
export const DEFAULT_RESOURCE_TIMEOUT_MS = 60 * 60 * 1000

/** The Hugging Face endpoint, unless `GPUNET_HF_ENDPOINT` names another (tests point it at 127.0.0.1). */
export const DEFAULT_HF_ENDPOINT = 'https://huggingface.co'

/** Listings (S3 XML pages, HF model JSON) are read into memory: they are capped far below any file. */
const MAX_LISTING_BYTES = 16 * 1024 * 1024

/** S3 listings are paged by 1000 keys; a bucket listing stops after this many pages. */
const MAX_LISTING_PAGES = 100

/** A downloaded resource: the host folder holding its files and where it appears in the container. */
export interface ResourceMount {
  source: string
  target: string
}

/** Settings of `loadResources`. */
export interface ResourceOptions {
  /** The operation's env after secret substitution: `HF_TOKEN` authorizes Hugging Face downloads. */
  env?: Readonly<Record<string, string>>
  hfEndpoint?: string
  maxBytes?: number
  timeoutMs?: number
  /** Ends the downloads early, e.g. when the job is ended on chain. */
  signal?: AbortSignal
}

/** The downloaded resources of one operation, and the cleanup that removes them from the host. */
export interface LoadedResources {
  mounts: ResourceMount[]
  cleanup(): Promise<void>
}

/**
 * Downloads every resource into its own folder under a fresh temporary folder (resources of one target into one). Throws a `GpunetError`
 * `resource_failed` naming the resource (type, target, and file or status) on the first failure, never a
 * credential; what was downloaded is removed then.
 */
export async function loadResources(
  resources: readonly Resource[],
  options: ResourceOptions = {},
): Promise<LoadedResources> {
  const root = await mkdtemp(join(tmpdir(), 'gpunet-res-'))
  const cleanup = () => rm(root, {recursive: true, force: true})
  const mounts: ResourceMount[] = []
  try {
    for (const [index, resource] of resources.entries()) {
      // Resources of one target share its folder (the network's several S3 `buckets` of one resource).
      const shared = mounts.find((m) => m.target === resource.target)
      const source = shared?.source ?? join(root, String(index))
      if (!shared) await mkdir(source)
      await loadResource(resource, source, options)
      if (!shared) mounts.push({source, target: resource.target})
    }
    return {mounts, cleanup}
  } catch (error) {
    await cleanup()
    throw error
  }
}

/** One file to fetch: its path under the resource folder and the request that returns it. */
interface Download {
  file: string
  url: URL
  headers: Record<string, string>
}

async function loadResource(resource: Resource, dir: string, options: ResourceOptions): Promise<void> {
  const label = `${resource.type} resource for ${resource.target}`
  checkTarget(resource.target, label)
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_RESOURCE_TIMEOUT_MS)
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout
  const source = resource.type === 'S3' ? s3Source(resource, label) : hfSource(resource, label, options)
  const files = resource.files ?? (await source.list(signal))
  let budget = options.maxBytes ?? DEFAULT_RESOURCE_MAX_BYTES
  for (const file of files) {
    const path = confinedPath(dir, file, label)
    const download = source.download(file)
    const response = await request(download.url, download.headers, signal, `${label}: ${file}`)
    await mkdir(dirname(path), {recursive: true})
    budget -= await streamToFile(response, path, budget, `${label}: ${file}`, signal)
  }
}

interface Source {
  list(signal: AbortSignal): Promise<string[]>
  download(file: string): Download
}

function s3Source(resource: Resource, label: string): Source {
  if (!resource.url || !resource.bucket) fail(`${label} needs "url" and "bucket".`)
  const base = new URL(resource.url)
  const bucket = resource.bucket
  const iam = resource.IAM
  const credentials =
    iam?.ACCESS_KEY_ID && iam.SECRET_ACCESS_KEY
      ? {accessKeyId: iam.ACCESS_KEY_ID, secretAccessKey: iam.SECRET_ACCESS_KEY, region: iam.REGION ?? 'us-east-1'}
      : undefined
  const objectUrl = (key: string, query: Record<string, string> = {}) => {
    const url = new URL(base)
    const prefix = base.pathname.replace(/\/+$/, '')
    // The listing is `/{bucket}` itself; an object is `/{bucket}/{key}`, each key segment encoded.
    const segments = key === '' ? [bucket] : [bucket, ...key.split('/')]
    url.pathname = `${prefix}/${segments.map(encodeRfc3986).join('/')}`
    url.search = new URLSearchParams(query).toString()
    return url
  }
  const signed = (url: URL): Download => ({file: '', url, headers: credentials ? signV4(url, credentials) : {}})
  return {
    async list(signal) {
      const keys: string[] = []
      let token: string | undefined
      for (let page = 0; page < MAX_LISTING_PAGES; page++) {
        const query: Record<string, string> = {'list-type': '2', ...(token ? {'continuation-token': token} : {})}
        const {url, headers} = signed(objectUrl('', query))
        const xml = await readText(await request(url, headers, signal, `${label}: listing`), `${label}: listing`)
        const listing = parseListObjectsV2(xml)
        keys.push(...listing.keys.filter((key) => !key.endsWith('/')))
        token = listing.nextToken
        if (!token) return keys
      }
      fail(`${label}: the bucket holds more than ${MAX_LISTING_PAGES * 1000} objects; name its "files".`)
    },
    download: (file) => ({...signed(objectUrl(file)), file}),
  }
}

function hfSource(resource: Resource, label: string, options: ResourceOptions): Source {
  if (!resource.repo) fail(`${label} needs "repo".`)
  const repo = resource.repo
  const endpoint = (options.hfEndpoint ?? DEFAULT_HF_ENDPOINT).replace(/\/+$/, '')
  const token = options.env?.HF_TOKEN
  const headers: Record<string, string> = token ? {authorization: `Bearer ${token}`} : {}
  const repoPath = repo.split('/').map(encodeURIComponent).join('/')
  return {
    async list(signal) {
      const url = new URL(`${endpoint}/api/models/${repoPath}`)
      const text = await readText(await request(url, headers, signal, `${label}: listing`), `${label}: listing`)
      let siblings: unknown
      try {
        siblings = (JSON.parse(text) as {siblings?: unknown}).siblings
      } catch {
        fail(`${label}: the model listing of ${repo} is not JSON.`)
      }
      if (!Array.isArray(siblings)) fail(`${label}: the model listing of ${repo} has no "siblings".`)
      return siblings.flatMap((s: unknown) => {
        const name = (s as {rfilename?: unknown} | null)?.rfilename
        return typeof name === 'string' ? [name] : []
      })
    },
    download: (file) => ({
      file,
      url: new URL(`${endpoint}/${repoPath}/resolve/main/${file.split('/').map(encodeURIComponent).join('/')}`),
      headers,
    }),
  }
}

/** The container path must be absolute and not the root: it becomes a mount point. */
function checkTarget(target: string, label: string): void {
  if (!target.startsWith('/') || posix.normalize(target) === '/' || target.includes('\0') || target.includes(',')) {
    fail(`${label}: "target" must be an absolute path inside the container, not "/" (and without ",").`)
  }
}

/** The host path of a file of a resource; refuses names that would leave the resource folder. */
export function confinedPath(dir: string, file: string, label = 'resource'): string {
  const parts = file.split('/')
  if (file === '' || file.startsWith('/') || file.includes('\0') || file.includes('\\') || parts.includes('..')) {
    fail(`${label}: the file name ${JSON.stringify(file)} would leave the resource folder.`)
  }
  const path = resolve(dir, ...parts.filter((p) => p !== '' && p !== '.'))
  if (!path.startsWith(dir + sep))
    fail(`${label}: the file name ${JSON.stringify(file)} would leave the resource folder.`)
  return path
}

async function request(url: URL, headers: Record<string, string>, signal: AbortSignal, what: string) {
  let response: Response
  try {
    response = await httpFetch(url, {headers, signal, redirect: 'follow'})
  } catch (error) {
    const reason = timedOut(signal)
      ? 'timed out'
      : signal.aborted
        ? 'stopped: the job ended'
        : describeHttpFailure(error)
    fail(`${what}: the request to ${url.host} failed (${reason}).`)
  }
  if (!response.ok) {
    await response.body?.cancel()
    fail(`${what}: ${url.host} answered HTTP ${response.status}.`)
  }
  return response
}

/** Streams a response body to `path`, failing once it passes `budget` bytes; returns the bytes written. */
async function streamToFile(
  response: Response,
  path: string,
  budget: number,
  what: string,
  signal: AbortSignal,
): Promise<number> {
  let written = 0
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      written += chunk.length
      if (written > budget) callback(new GpunetError('resource_failed', `${what}: the resource is over its size cap.`))
      else callback(null, chunk)
    },
  })
  const body = response.body ? Readable.fromWeb(response.body as WebReadableStream) : Readable.from([])
  try {
    await pipeline(body, counter, createWriteStream(path, {flags: 'wx', mode: 0o644}))
  } catch (error) {
    if (error instanceof GpunetError) throw error
    const reason = timedOut(signal) ? 'timed out' : signal.aborted ? 'stopped: the job ended' : (error as Error).message
    fail(`${what}: the download broke off (${reason}).`)
  }
  return written
}

async function readText(response: Response, what: string): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of Readable.fromWeb(response.body as WebReadableStream)) {
    size += (chunk as Buffer).length
    if (size > MAX_LISTING_BYTES) fail(`${what}: the listing is larger than ${MAX_LISTING_BYTES} bytes.`)
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * The keys and continuation token of a ListObjectsV2 answer. It reads only `<Key>` and
 * `<NextContinuationToken>` texts and the five XML entities and character references: no DTD, no entity
 * expansion, so a hostile listing cannot make it do more than a linear scan.
 */
export function parseListObjectsV2(xml: string): {keys: string[]; nextToken?: string} {
  const texts = (tag: string) =>
    [...xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, 'g'))].map((m) => unescapeXml(m[1]!))
  const truncated = texts('IsTruncated')[0] === 'true'
  const nextToken = truncated ? texts('NextContinuationToken')[0] : undefined
  return {keys: texts('Key'), ...(nextToken ? {nextToken} : {})}
}

const XML_ENTITIES: Record<string, string> = {amp: '&', lt: '<', gt: '>', quot: '"', apos: "'"}

function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, name: string) => {
    if (name.startsWith('#x')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16))
    if (name.startsWith('#')) return String.fromCodePoint(Number.parseInt(name.slice(1), 10))
    return XML_ENTITIES[name] ?? whole
  })
}

/** Percent-encoding as SigV4 wants it: everything but unreserved characters. */
function encodeRfc3986(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

const EMPTY_SHA256 = createHash('sha256').update('').digest('hex')

/**
 * The headers of a GET signed with AWS Signature Version 4 for S3 (no body). Written on node:crypto rather than
 * a package: a GET needs only the canonical request and the HMAC chain, and the node then depends on nothing more.
 */
export function signV4(
  url: URL,
  credentials: {accessKeyId: string; secretAccessKey: string; region: string},
  now = new Date(),
): Record<string, string> {
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '')
  const day = amzDate.slice(0, 8)
  const headers: Record<string, string> = {host: url.host, 'x-amz-content-sha256': EMPTY_SHA256, 'x-amz-date': amzDate}
  const signedHeaders = Object.keys(headers).sort().join(';')
  const query = [...url.searchParams.entries()]
    .map(([k, v]) => [encodeRfc3986(k), encodeRfc3986(v)])
    .sort(([a, b], [c, d]) => (a! < c! ? -1 : a! > c! ? 1 : b! < d! ? -1 : b! > d! ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
  const canonicalHeaders = Object.keys(headers)
    .sort()
    .map((name) => `${name}:${headers[name]!.trim()}\n`)
    .join('')
  const canonical = ['GET', url.pathname, query, canonicalHeaders, signedHeaders, EMPTY_SHA256].join('\n')
  const scope = `${day}/${credentials.region}/s3/aws4_request`
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n')
  let key: Buffer = createHmac('sha256', `AWS4${credentials.secretAccessKey}`).update(day).digest()
  for (const part of [credentials.region, 's3', 'aws4_request']) key = createHmac('sha256', key).update(part).digest()
  const signature = createHmac('sha256', key).update(toSign).digest('hex')
  const authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`
  // fetch sends `host` itself, from the URL that was signed.
  return {'x-amz-content-sha256': EMPTY_SHA256, 'x-amz-date': amzDate, authorization}
}

function timedOut(signal: AbortSignal): boolean {
  return signal.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError'
}

function fail(message: string): never {
  throw new GpunetError('resource_failed', message)
}
