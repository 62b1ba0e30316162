/** Following a job until a condition holds, bounded by a deadline (exit 124 when it runs out). */
import type {PublicKey} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../errors.js'
import type {MarketNetwork} from './connect.js'
import {type JobStatus, type JobView, readJob} from './jobs.js'

const POLL_MS = 500

/** Polls the job until `until(view)` holds; tells `onStatus` each new status; exits 124 after `timeoutSeconds`. */
export async function waitForJob(
  net: MarketNetwork,
  job: PublicKey,
  until: (view: JobView) => boolean,
  timeoutSeconds: number,
  onStatus: (status: JobStatus) => void,
): Promise<JobView> {
  const deadline = Date.now() + timeoutSeconds * 1000
  let last: JobStatus | undefined
  for (;;) {
    const view = await readJob(net.connection, net.programId, job)
    if (view.status !== last) onStatus((last = view.status))
    if (until(view)) return view
    if (Date.now() >= deadline) {
      throw new GpunetError('wait_timeout', `job ${job.toBase58()} is still ${view.status} after ${timeoutSeconds} s`, {
        exitCode: ExitCode.TIMEOUT,
        hint: `follow it with \`gpunet job get ${job.toBase58()} --wait\`, or raise --wait-timeout`,
      })
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, Math.max(0, deadline - Date.now()))))
  }
}
