/** https requests to the gateway's names with the localnet's authority trusted by the request alone. */
import type {LookupFunction} from 'node:net'
import {request} from 'node:https'

/** Resolves every name to 127.0.0.1, as a browser resolves `*.localhost` (the test's resolver may not). */
export const loopbackLookup: LookupFunction = (_host, options, callback) => {
  if ((options as {all?: boolean}).all)
    (callback as (e: null, a: {address: string; family: number}[]) => void)(null, [{address: '127.0.0.1', family: 4}])
  else callback(null, '127.0.0.1', 4)
}

/** What an https request got: its status, body and the gateway's header; or the client's error (its code). */
export type HttpsAnswer = {status: number; body: string; gateway?: string} | {error: string}

/**
 * A GET of `url` (`https://<name>.node.localhost:<port>/path`) resolved to 127.0.0.1; `ca` is the one authority
 * trusted (none given: Node's own list only, which the localnet's is not in).
 */
export function httpsGet(url: string, ca?: string, timeoutMs = 5000): Promise<HttpsAnswer> {
  return new Promise((resolve) => {
    const req = request(url, {ca, lookup: loopbackLookup, agent: false}, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('error', (error: NodeJS.ErrnoException) => resolve({error: error.code ?? error.message}))
      res.on('end', () =>
        resolve({status: res.statusCode ?? 0, body, gateway: res.headers['x-gpunet-gateway'] as string | undefined}),
      )
    })
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)))
    req.on('error', (error: NodeJS.ErrnoException) => resolve({error: error.code ?? error.message}))
    req.end()
  })
}
