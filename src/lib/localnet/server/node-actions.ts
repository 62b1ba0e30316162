/** The client of the localnet's node control route (node-control.ts): `localnet node leave` and `join`. */
import {httpText} from '../../http/client.js'
import {ExitCode, GpunetError} from '../../errors.js'
import {parseAddressText} from '../../text/base58-text.js'
import type {LocalnetNodeEntry} from '../nodes/node-agent.js'
import {runningLocalnet} from './control.js'
import type {NodeAction} from './node-control.js'

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

/** `localnet node leave|join NODE` on the localnet of `dataDir`: the node's entry after it; exit 5 when none runs. */
export async function changeLocalnetNode(
  dataDir: string,
  node: string,
  action: NodeAction,
): Promise<LocalnetNodeEntry> {
  const address = parseAddressText(node, 'the node')
  const running = await runningLocalnet(dataDir)
  if (!running) {
    throw new GpunetError('localnet_not_running', `no localnet is running for ${dataDir}`, {
      exitCode: ExitCode.UNAVAILABLE,
      hint: 'start it (`gpunet localnet start --detach`); its nodes join their markets as it starts',
    })
  }
  return nodeAction(running.rpcUrl, address, action)
}
