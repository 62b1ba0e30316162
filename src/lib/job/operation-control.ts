/**
 * Restarting or stopping one operation or group of a running job through its node's API (`POST
 * /job/<job>/operation/<op>/restart|stop`, `/job/<job>/group/<group>/restart|stop`), signed by its poster: what
 * `job restart` and `job stop --op` send, on every network.
 */
import {ExitCode, GpunetError, isGpunetError} from '../errors.js'
import {describeHttpFailure, httpText} from '../http/client.js'
import type {MarketNetwork} from '../market/connect.js'
import type {JobView} from '../market/jobs/jobs.js'
import {signHeader} from '../node-api/protocol.js'
import type {Wallet} from '../keys/wallet.js'

/**
 * `error` as an operation's control reports it: a job already over (readOwnJob's `job_over`, a usage error for the
 * chain's stop and extend) has no operation running, exit 7 as `job exec` and `job stats` say; others as they are.
 */
export function endedJobHasNoOperation(error: unknown): unknown {
  if (!isGpunetError(error) || error.code !== 'job_over') return error
  return new GpunetError('job_not_running', `${error.message}: no operation of it runs`, {
    exitCode: ExitCode.NOT_FOUND,
    hint: 'its logs and result stay: `gpunet job logs JOB` and `gpunet job get JOB` show how each operation ended',
    fields: error.fields,
  })
}

/** An operation, or a whole group, of a job. */
export type OperationTarget = {op: string} | {group: string}

/** How long the node may take to answer. */
const CONTROL_TIMEOUT_MS = 30_000

/** Asks the job's node to restart or stop `target`; resolves with the operations it acted on. */
export async function controlOperation(
  net: MarketNetwork,
  wallet: Wallet,
  view: JobView,
  target: OperationTarget,
  action: 'restart' | 'stop',
): Promise<{ops: string[]}> {
  const job = view.address.toBase58()
  const named = 'op' in target ? `operation ${target.op}` : `group ${target.group}`
  if (!view.run) {
    // 7, as `job exec` and `job stats` answer a job that is not running: nothing runs there to act on.
    throw new GpunetError('job_not_running', `job ${job} is ${view.status}: no node runs its ${named} yet`, {
      exitCode: ExitCode.NOT_FOUND,
      hint: `wait until it is RUNNING (\`gpunet job get ${job} --wait-for running\`)`,
      fields: {job, state: view.status, status: view.status},
    })
  }
  const node = view.run.node.toBase58()
  const base = net.nodeApiUrl(node)
  if (!base) {
    throw new GpunetError('no_node_api', `No node API URL for ${net.name}: the job's node cannot be asked`, {
      exitCode: ExitCode.USAGE,
      hint: 'set the network host (--network-host or GPUNET_NETWORK_HOST) or GPUNET_NODE_API_URL',
    })
  }
  const path =
    'op' in target
      ? `/job/${job}/operation/${encodeURIComponent(target.op)}/${action}`
      : `/job/${job}/group/${encodeURIComponent(target.group)}/${action}`
  const authorization = signHeader((m) => wallet.sign(m), {action, node, job})
  let answer: {status: number; body: string}
  try {
    const response = await httpText(`${base}${path}`, {
      method: 'POST',
      headers: {authorization},
      signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS),
    })
    answer = {status: response.status, body: await response.text()}
  } catch (error) {
    throw new GpunetError('node_unreachable', `The node ${node} did not answer: ${describeHttpFailure(error)}`, {
      exitCode: ExitCode.UNAVAILABLE,
    })
  }
  // The node's words, cut short and on one line: a remote party's text is never shown as it came.
  const said = answer.body.replace(/\s+/g, ' ').trim().slice(0, 300)
  if (answer.status === 200) return {ops: opsOf(answer.body, target)}
  if (answer.status === 404)
    throw new GpunetError('not_found', `${said || `The job has no ${named}.`}`, {exitCode: ExitCode.NOT_FOUND})
  if (answer.status === 409 || answer.status === 400)
    throw new GpunetError('not_running', `The node did not ${action} it: ${said}`, {exitCode: ExitCode.USAGE})
  if (answer.status === 401 || answer.status === 403)
    throw new GpunetError('node_refused', `The node refused the request: ${said}`, {exitCode: ExitCode.DENIED})
  throw new GpunetError('node_failed', `The node answered HTTP ${answer.status}: ${said}`, {
    exitCode: ExitCode.UNAVAILABLE,
  })
}

/** The operations the node says it acted on (`ops`), or the one asked for when it does not list them. */
function opsOf(body: string, target: OperationTarget): string[] {
  try {
    const ops = (JSON.parse(body) as {ops?: unknown}).ops
    if (Array.isArray(ops) && ops.every((op) => typeof op === 'string')) return ops.slice(0, 1000)
  } catch {
    // The network's nodes answer {message} only.
  }
  return 'op' in target ? [target.op] : []
}
