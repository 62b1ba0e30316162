/**
 * What a command needs before it talks to a running job's node API as its poster: the job running, the node's API
 * URL, and the wallet that posted it. Read without web3.js (market/jobs/job-placement.ts), so `job exec` runs the same
 * code when it is answered before oclif loads (src/cli/fast-start.ts).
 */
import {ExitCode, GpunetError} from '../errors.js'
import type {MarketNetwork} from '../market/connect.js'
import {type ChainEndpoint, readJobPlacement} from '../market/jobs/job-placement.js'
import type {WalletKey} from '../keys/wallet-key.js'

/** A network as the node commands reach it: its chain, and where a node's API answers. */
export interface JobNodeSource extends ChainEndpoint {
  name: string
  /** The base URL of a node's API; null when the network host is not known. */
  nodeApiUrl(node: string): string | null
}

/** The node running a job, where its API answers, and the poster's wallet. */
export interface RunningJobNode<W extends WalletKey = WalletKey> {
  job: string
  node: string
  apiUrl: string
  wallet: W
  /** The network's name (`localnet`, `devnet`...), as errors and signed grants name it. */
  network: string
}

/** The JobNodeSource of a network resolved for the market commands. */
export function jobNodeSource(net: MarketNetwork): JobNodeSource {
  return {
    name: net.name,
    rpcUrl: net.rpcUrl,
    programId: net.programId.toBase58(),
    nodeApiUrl: (node) => net.nodeApiUrl(node),
  }
}

/**
 * Finds the node of a RUNNING job (`job`, a base58 address) and checks the wallet posted it; `doing` words the
 * refusals ("run commands").
 */
export async function runningJobNode<W extends WalletKey>(
  source: JobNodeSource,
  job: string,
  loadWallet: () => Promise<W>,
  doing: string,
): Promise<RunningJobNode<W>> {
  const placement = await readJobPlacement(source, job)
  if (placement.status !== 'RUNNING' || !placement.node) {
    throw new GpunetError('job_not_running', `job ${job} is ${placement.status}: only a running job can ${doing}`, {
      exitCode: ExitCode.NOT_FOUND,
      fields: {job, state: placement.status, status: placement.status},
    })
  }
  const {node} = placement
  const apiUrl = source.nodeApiUrl(node)
  if (!apiUrl) {
    throw new GpunetError('node_api_unknown', `No node API URL for ${source.name}`, {
      exitCode: ExitCode.UNAVAILABLE,
      hint: 'set the network host (--network-host or GPUNET_NETWORK_HOST) or GPUNET_NODE_API_URL',
    })
  }
  const wallet = await loadWallet()
  if (wallet.address !== placement.poster) {
    throw new GpunetError('not_poster', `only the poster of job ${job} may ${doing}`, {
      exitCode: ExitCode.DENIED,
      hint: `its poster is ${placement.poster} (choose that wallet with --wallet)`,
    })
  }
  return {job, node, apiUrl, wallet, network: source.name}
}
