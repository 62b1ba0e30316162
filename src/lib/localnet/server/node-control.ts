/**
 * `localnet node leave NODE` and `join NODE`: the running localnet takes one of its nodes out of its market's queue,
 * or puts it back, as a node of the network goes offline and comes back. The route, on the localnet's RPC port
 * (`POST /localnet/nodes/<address>/leave` or `/join`, JSON only, so a web page cannot send it unasked); its client is
 * node-actions.ts.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'

import {isJsonContentType} from '../../http/loopback-guard.js'
import {sendJson, type SubService} from '../http.js'
import type {RunningNode} from '../nodes/node-agent.js'

/** What a leave or join does. */
export type NodeAction = 'leave' | 'join'

const PATH = /^\/localnet\/nodes\/([1-9A-HJ-NP-Za-km-z]{32,44})\/(leave|join)$/

/** The route; `running` is the localnet's nodes (null with --no-node). */
export function nodeControlService(running: () => RunningNode | null): SubService {
  return {
    name: 'node control',
    matches: (path) => path.startsWith('/localnet/nodes/'),
    async handle(req: IncomingMessage, res: ServerResponse, path: string) {
      req.resume()
      const match = PATH.exec(path)
      if (!match) return sendJson(res, 404, {error: `no route for ${req.method} ${path}`})
      if (req.method !== 'POST') return sendJson(res, 405, {error: 'POST only'})
      if (!isJsonContentType(req.headers['content-type'])) return sendJson(res, 415, {error: 'JSON only'})
      const [, address, action] = match as unknown as [string, string, NodeAction]
      const node = running()?.marketNodes.find((n) => n.agent.address === address)
      if (!node)
        return sendJson(res, 404, {error: 'node_not_found', message: `no node ${address} runs on this localnet`})
      if (action === 'leave') await node.agent.leave()
      else node.agent.join()
      const entry = running()!
        .nodes()
        .find((n) => n.address === address)
      sendJson(res, 200, entry)
    },
  }
}
