/**
 * Whether each exposed port of a running job is online, as its node's API says (`GET /job/<job>/endpoints`, the
 * network's EndpointSecret `status`, which continuous health checks keep current). Asked with a header signed by
 * the job's poster; `job get` shows it beside each service URL when the wallet is the poster's.
 */
import {isObject} from '../../definition/paths.js'
import {httpText} from '../../http/client.js'
import type {MarketNetwork} from '../connect.js'
import type {JobView} from './jobs.js'
import {signHeader} from '../../node-api/protocol.js'
import type {Wallet} from '../../keys/wallet.js'

/** How long the node may take to answer: `job get` does not wait on a slow node for long. */
const ENDPOINTS_TIMEOUT_MS = 5000

/** Ports the node answers for, at most: a node's answer is untrusted. */
const MAX_PORTS = 1000

/** Each exposed port's state (true: ONLINE), or null when the node's API cannot say (none, unreachable, refused). */
export async function endpointStatus(
  net: MarketNetwork,
  wallet: Wallet,
  view: JobView,
): Promise<Map<number, boolean> | null> {
  if (!view.run) return null
  const node = view.run.node.toBase58()
  const job = view.address.toBase58()
  const base = net.nodeApiUrl(node)
  if (!base) return null
  try {
    const response = await httpText(`${base}/job/${job}/endpoints`, {
      method: 'GET',
      headers: {authorization: signHeader((m) => wallet.sign(m), {action: 'read', node, job})},
      signal: AbortSignal.timeout(ENDPOINTS_TIMEOUT_MS),
    })
    if (!response.ok) return null
    const body = JSON.parse(await response.text()) as unknown
    const urls = isObject(body) && isObject(body.urls) ? Object.values(body.urls).slice(0, MAX_PORTS) : []
    const online = new Map<number, boolean>()
    for (const entry of urls) {
      if (!isObject(entry) || typeof entry.port !== 'number') continue
      // Several operations may expose one port: it is online when one of them is.
      online.set(entry.port, online.get(entry.port) === true || entry.status === 'ONLINE')
    }
    return online
  } catch {
    return null
  }
}
