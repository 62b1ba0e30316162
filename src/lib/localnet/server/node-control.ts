/**
 * `localnet node leave NODE` and `join NODE`: the running localnet takes one of its nodes out of its market's queue,
 * or puts it back, as a node of the network goes offline and comes back. The route, on the localnet's RPC port
 * (`POST /localnet/nodes/<address>/leave` or `/join`, JSON only, so a web page cannot send it unasked), and its client.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'

import {isJsonContentType} from '../../http/loopback-guard.js'
import {httpText} from '../../http/client.js'
import {ExitCode, GpunetError} from '../../errors.js'
import {sendJson, type SubService} from '../http.js'
import type {LocalnetNodeEntry, RunningNode} from '../nodes/node-agent.js'

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

/** Asks the localnet at `rpcUrl` to take `node` out of its queue or put it back; its entry as it is now. */
export async function nodeAction(rpcUrl: string, node: string, action: NodeAction): Promise<LocalnetNodeEntry> {
  const response = await httpText(`${rpcUrl}/localnet/nodes/${encodeURIComponent(node)}/${action}`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: '{}',
  })
  const text = await response.text()
  if (response.status === 404) {
    throw new GpunetError('node_not_found', `no node ${node} runs on the localnet`, {
      exitCode: ExitCode.NOT_FOUND,
      hint: '`gpunet localnet status` lists its nodes (a node runs only while the localnet has its node agents on)',
      fields: {node},
    })
  }
  if (!response.ok) {
    throw new GpunetError(
      'localnet_failed',
      `the localnet could not ${action} the node: it answered ${response.status}`,
      {
        exitCode: ExitCode.UNAVAILABLE,
        fields: {node},
      },
    )
  }
  return JSON.parse(text) as LocalnetNodeEntry
}
