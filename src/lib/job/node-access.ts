/**
 * What a command needs before it talks to a running job's node API as its poster: the job running, the node's API
 * URL, and the wallet that posted it.
 */
import type {PublicKey} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../errors.js'
import type {MarketNetwork} from '../market/connect.js'
import {readJob} from '../market/jobs.js'
import type {Wallet} from '../wallet.js'

/** The node running a job, where its API answers, and the poster's wallet. */
export interface RunningJobNode {
  job: string
  node: string
  apiUrl: string
  wallet: Wallet
}

/** Finds the node of a RUNNING job and checks the wallet posted it; `doing` words the refusals ("run commands"). */
export async function runningJobNode(
  net: MarketNetwork,
  job: PublicKey,
  loadWallet: () => Promise<Wallet>,
  doing: string,
): Promise<RunningJobNode> {
  const address = job.toBase58()
  const view = await readJob(net.connection, net.programId, job)
  if (view.status !== 'RUNNING' || !view.run) {
    throw new GpunetError('job_not_running', `job ${address} is ${view.status}: only a running job can ${doing}`, {
      exitCode: ExitCode.NOT_FOUND,
      fields: {job: address, state: view.status, status: view.status},
    })
  }
  const node = view.run.node.toBase58()
  const apiUrl = net.nodeApiUrl(node)
  if (!apiUrl) {
    throw new GpunetError('node_api_unknown', `No node API URL for ${net.name}`, {
      exitCode: ExitCode.UNAVAILABLE,
      hint: 'set the network host (--network-host or GPUNET_NETWORK_HOST) or GPUNET_NODE_API_URL',
    })
  }
  const wallet = await loadWallet()
  if (wallet.address !== view.job.project.toBase58()) {
    throw new GpunetError('not_poster', `only the poster of job ${address} may ${doing}`, {
      exitCode: ExitCode.DENIED,
      hint: `its poster is ${view.job.project.toBase58()} (choose that wallet with --wallet)`,
    })
  }
  return {job: address, node, apiUrl, wallet}
}
