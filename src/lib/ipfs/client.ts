/**
 * The content store client: uploads through an IPFS HTTP API (`POST /api/v0/add`) or a pinning service
 * (`POST /pinning/pinFileToIPFS` with a JWT), reads through a gateway (`GET <gateway>/ipfs/<cid>`). Every upload is
 * checked against the CIDv0 computed locally from the same bytes: nodes fetch by that CID, so a store that answers
 * another one is refused before anything is posted. Every read is capped in bytes and, for a CIDv0 (every CID the
 * chain holds), checked the same way: a gateway is a stranger, and what it answers must be the bytes of the CID.
 */
// Before undici: see builtin-fetch-first.ts.
import '../http/builtin-fetch-first.js'
import {FormData} from 'undici'

import {ExitCode, GpunetError} from '../errors.js'
import {describeHttpFailure, httpFetch, readBodyAtMost, type RequestInit, type Response} from '../http/client.js'
import {computeCidV0} from './cid.js'

const UPLOAD_TIMEOUT_MS = 120_000

/** The most bytes a read takes unless told otherwise: the `maxContentBytes` setting's default (64 MiB). */
export const DEFAULT_MAX_CONTENT_BYTES = 64 * 1024 * 1024

const CID_V0 = /^Qm[1-9A-HJ-NP-Za-km-z]{44}$/

/** Where definitions go: an upload returns the CID the store computed for the bytes. */
export interface Uploader {
  /** The store's URL, as progress messages name it. */
  readonly url: string
  upload(bytes: Uint8Array, name: string): Promise<string>
}

/** An IPFS HTTP API (a Kubo node, or the localnet's content store): `POST /api/v0/add?cid-version=0`. */
export class IpfsApiUploader implements Uploader {
  constructor(readonly url: string) {}

  /** Adds the bytes; returns the `Hash` the node answered. */
  async upload(bytes: Uint8Array, name: string): Promise<string> {
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(bytes)]), name)
    const res = await storeRequest(this.url, '/api/v0/add?cid-version=0&pin=true', {method: 'POST', body: form})
    const answer = JSON.parse((await res.text()).trim().split('\n')[0] || '{}') as {Hash?: unknown}
    return String(answer.Hash)
  }
}

/** A pinning service with the Pinata API (what the network's own client uses): JWT as a bearer token. */
export class PinningServiceUploader implements Uploader {
  constructor(
    readonly url: string,
    private readonly jwt: string,
  ) {}

  /** Pins the bytes as a file with CIDv0; returns the `IpfsHash` the service answered. */
  async upload(bytes: Uint8Array, name: string): Promise<string> {
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(bytes)]), name)
    form.append('pinataOptions', JSON.stringify({cidVersion: 0}))
    form.append('pinataMetadata', JSON.stringify({name}))
    const res = await storeRequest(this.url, '/pinning/pinFileToIPFS', {
      method: 'POST',
      body: form,
      headers: {authorization: `Bearer ${this.jwt}`},
    })
    const answer = (await res.json()) as {IpfsHash?: unknown}
    return String(answer.IpfsHash)
  }
}

/** Uploads (when a store is configured) and reads (through a gateway) the content jobs refer to. */
export class ContentClient {
  constructor(
    private readonly uploader: Uploader | null,
    /** Base URL of the gateway: `<gateway>/ipfs/<cid>`, or the gateway path itself (`.../ipfs`). */
    readonly gatewayUrl: string,
    /** The error saying how to configure an upload, thrown by `add` when none is. */
    private readonly noUploader: () => GpunetError = () =>
      new GpunetError('content_store_missing', 'no content store is configured', {exitCode: ExitCode.USAGE}),
    /** The most bytes a read takes (the `maxContentBytes` setting). */
    readonly maxBytes: number = DEFAULT_MAX_CONTENT_BYTES,
  ) {}

  /** Where uploads go (for progress messages); the gateway when none is configured. */
  get url(): string {
    return this.uploader?.url ?? this.gatewayUrl
  }

  /** Fails (exit 2, naming every setting) when uploads have nowhere to go: call it before anything is spent. */
  requireUploader(): Uploader {
    if (!this.uploader) throw this.noUploader()
    return this.uploader
  }

  /** Uploads bytes and returns their CIDv0; exit 5 when the store answers another CID than the bytes hash to. */
  async add(bytes: Uint8Array, name = 'job.json'): Promise<string> {
    const uploader = this.requireUploader()
    const expected = computeCidV0(bytes).cid
    const answered = await uploader.upload(bytes, name)
    if (answered !== expected) {
      throw new GpunetError(
        'content_store_mismatch',
        `the content store ${uploader.url} answered CID ${answered} for content whose CIDv0 is ${expected}: nothing was posted`,
        {
          exitCode: ExitCode.UNAVAILABLE,
          hint: 'nodes fetch a job by the CIDv0 of its bytes: use a store that adds files as IPFS does by default (CIDv0, 256 KiB chunks)',
          fields: {cid: expected, answered},
        },
      )
    }
    return expected
  }

  /**
   * Downloads the content of a CID through the gateway. An answer larger than `maxBytes` (the client's limit unless
   * given) is dropped as soon as it passes it (exit 3, `content_too_large`), so a gateway serving endless bytes costs
   * at most that much memory; the bytes of a CIDv0 must hash to it as `ipfs add` hashes a file (exit 5,
   * `content_mismatch`, naming the gateway); `signal` ends the read early.
   */
  async get(cid: string, options: {maxBytes?: number; signal?: AbortSignal} = {}): Promise<Uint8Array> {
    const base = this.gatewayUrl.replace(/\/+$/, '')
    const path = /\/ipfs$/.test(base) ? `/${cid}` : `/ipfs/${cid}`
    const res = await storeRequest(base, path, {method: 'GET'}, options.signal)
    const bytes = await readAtMost(res, options.maxBytes ?? this.maxBytes, cid)
    if (CID_V0.test(cid)) {
      const actual = computeCidV0(bytes).cid
      if (actual !== cid) throw contentMismatch(`${new URL(base).origin}${new URL(base).pathname}`, cid, actual)
    }
    return bytes
  }
}

/** The error for a gateway that answered other bytes than the CID's. */
function contentMismatch(gateway: string, cid: string, actual: string): GpunetError {
  return new GpunetError(
    'content_mismatch',
    `the gateway ${gateway} answered other content for ${cid} (its bytes are ${actual}): refused`,
    {
      exitCode: ExitCode.UNAVAILABLE,
      hint: `the bytes of a CID hash to it; use another gateway (GPUNET_IPFS_GATEWAY or \`gpunet config set ipfsGateway URL\`)`,
      fields: {cid, answered: actual, gateway},
    },
  )
}

/** The body of `res`, refused once it passes `maxBytes` (by its Content-Length, or while it streams). */
async function readAtMost(res: Response, maxBytes: number, cid: string): Promise<Uint8Array> {
  const bytes = await readBodyAtMost(res, maxBytes)
  if (bytes !== 'too_large') return bytes
  throw new GpunetError('content_too_large', `the content of ${cid} is larger than ${maxBytes} bytes`, {
    exitCode: ExitCode.INVALID_INPUT,
    hint: 'raise the limit with GPUNET_MAX_CONTENT_BYTES or `gpunet config set maxContentBytes BYTES`',
    fields: {cid, maxBytes},
  })
}

async function storeRequest(base: string, path: string, init: RequestInit, signal?: AbortSignal): Promise<Response> {
  const url = `${base.replace(/\/+$/, '')}${path}`
  const where = `${new URL(url).origin}${new URL(url).pathname}`
  let res: Response
  const timeout = AbortSignal.timeout(UPLOAD_TIMEOUT_MS)
  try {
    res = await httpFetch(url, {...init, signal: signal ? AbortSignal.any([signal, timeout]) : timeout})
  } catch (error) {
    throw new GpunetError(
      'content_store_unreachable',
      `cannot reach the content store at ${where}: ${describeHttpFailure(error)}`,
      {
        exitCode: ExitCode.UNAVAILABLE,
        cause: error,
      },
    )
  }
  if (res.ok) return res
  await res.arrayBuffer().catch(() => undefined)
  if (res.status === 401 || res.status === 403) {
    throw new GpunetError('content_store_denied', `the content store refused the request to ${where} (${res.status})`, {
      exitCode: ExitCode.DENIED,
      hint: 'check the pinning service JWT (GPUNET_PINATA_JWT)',
    })
  }
  throw new GpunetError('content_store_failed', `the content store answered ${res.status} to ${where}`, {
    exitCode: res.status === 404 ? ExitCode.NOT_FOUND : ExitCode.UNAVAILABLE,
  })
}

/** A network's content store as its settings name it, and the error of a network with nowhere to upload. */
export interface ContentSettings {
  network: string
  pinataJwt?: string
  pinningServiceUrl: string
  contentStoreUrl?: string
  /** The gateway a layer above the preset names; the preset's apart, for it yields to an IPFS API's own. */
  ipfsGatewaySet?: string
  ipfsGatewayPreset?: string
  maxBytes: number
  missingStore(): GpunetError
}

/**
 * The content store of a network. Uploads: a pinning service when a JWT is set, else an IPFS HTTP API when its URL
 * is set, else (localnet) the localnet's store. Reads: the gateway set, else the IPFS API's own `/ipfs/` path,
 * else the network's gateway (its preset), else (localnet) the localnet's store.
 */
export function networkContentClient(settings: ContentSettings, localnetStore?: string): ContentClient {
  const apiUrl = (settings.contentStoreUrl ?? localnetStore)?.replace(/\/+$/, '')
  const uploader = settings.pinataJwt
    ? new PinningServiceUploader(settings.pinningServiceUrl, settings.pinataJwt)
    : apiUrl
      ? new IpfsApiUploader(apiUrl)
      : null
  const gateway = settings.ipfsGatewaySet ?? apiUrl ?? settings.ipfsGatewayPreset
  if (gateway === undefined) throw new Error(`no content gateway on ${settings.network}`)
  return new ContentClient(uploader, gateway.replace(/\/+$/, ''), settings.missingStore, settings.maxBytes)
}
