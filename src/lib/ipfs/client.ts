/** The content store client: `POST /api/v0/add` to upload and `GET /ipfs/<cid>` to download, as IPFS serves them. */
import {ExitCode, GpunetError} from '../errors.js'
import {computeCidV0} from './cid.js'

/** An IPFS HTTP API that also serves the gateway path (the localnet's content store, or a configured node). */
export class ContentClient {
  constructor(readonly url: string) {}

  /** Uploads bytes and returns their CIDv0, checked against the one computed locally. */
  async add(bytes: Uint8Array, name = 'job.json'): Promise<string> {
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(bytes)]), name)
    const res = await this.request('/api/v0/add?cid-version=0', {method: 'POST', body: form})
    const answer = JSON.parse((await res.text()).trim().split('\n')[0] ?? '{}') as {Hash?: string}
    const expected = computeCidV0(bytes).cid
    if (answer.Hash !== expected) {
      throw new GpunetError('content_store_mismatch', `the content store answered ${answer.Hash} for ${expected}`, {
        exitCode: ExitCode.UNAVAILABLE,
      })
    }
    return expected
  }

  /** Downloads the content of a CID. */
  async get(cid: string): Promise<Uint8Array> {
    const res = await this.request(`/ipfs/${cid}`, {method: 'GET'})
    return new Uint8Array(await res.arrayBuffer())
  }

  private async request(path: string, init: RequestInit): Promise<Response> {
    let res: Response
    try {
      res = await fetch(`${this.url}${path}`, {...init, signal: AbortSignal.timeout(60_000)})
    } catch (error) {
      throw new GpunetError(
        'content_store_unreachable',
        `cannot reach the content store at ${this.url}: ${(error as Error).message}`,
        {
          exitCode: ExitCode.UNAVAILABLE,
          cause: error,
        },
      )
    }
    if (!res.ok) {
      const code = res.status === 404 ? ExitCode.NOT_FOUND : ExitCode.UNAVAILABLE
      throw new GpunetError('content_store_failed', `the content store answered ${res.status} to ${path}`, {
        exitCode: code,
      })
    }
    return res
  }
}
