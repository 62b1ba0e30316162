/** The network's own names in tests: @nosana/sdk's functions that make them, and a GET of a name on the gateway. */
import {request} from 'node:http'

import {GATEWAY_ANSWER_HEADER} from '../../src/lib/node/gateway-answer.js'

/** The functions of @nosana/sdk (a devDependency) the network's CLI and nodes make the names with. */
export interface NetworkSdk {
  createHash(text: string, length: number): string
  getExposeIdHash(flowId: string, op: string | number, port: string | number): string
}

/** @nosana/sdk, loaded when a test needs it (a large module: never at import time). */
export async function networkSdk(): Promise<NetworkSdk> {
  return (await import('@nosana/sdk')) as unknown as NetworkSdk
}

/** A GET of `/` on 127.0.0.1:`port` with the Host header `host`: status, body, content type and the gateway's header. */
export function getAsHost(
  port: number,
  host: string,
): Promise<{status: number; body: string; type: string; reason?: string}> {
  return new Promise((resolve, reject) => {
    const req = request({host: '127.0.0.1', port, path: '/', headers: {host: `${host}:${port}`}}, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body,
          type: String(res.headers['content-type']),
          reason: res.headers[GATEWAY_ANSWER_HEADER] as string | undefined,
        }),
      )
    })
    req.on('error', reject)
    req.end()
  })
}
