/**
 * What the owner's commands check of a deployment's state before they ask or send anything: the same rules the
 * manager applies (its 409 says so too), given here first so a mistaken stop or delete is a clear exit 2
 * without a question or a request.
 */
import {ExitCode, GpunetError} from '../../errors.js'
import type {Deployment} from './client.js'

/** The states in which a deployment's manager may still list, extend or stop jobs. */
export const ACTIVE_STATES: ReadonlySet<string> = new Set(['STARTING', 'RUNNING', 'STOPPING', 'INSUFFICIENT_FUNDS'])

/** The states a stop has nothing to do in. */
const NOT_STOPPABLE: ReadonlySet<string> = new Set(['DRAFT', 'STOPPING', 'STOPPED', 'ARCHIVED'])

/** What is being done to a deployment, for the checks below. */
export type StateAction = 'stop' | 'delete'

/** Exit 2 when the deployment's state does not allow `action` (docs/deployments.md, "States"). */
export function checkState(deployment: Deployment, action: StateAction): void {
  const {id, status} = deployment
  const fields = {deployment: id, status}
  if (action === 'stop' && NOT_STOPPABLE.has(status)) {
    throw new GpunetError('deployment_not_running', `deployment ${id} is ${status}: there is nothing to stop`, {
      exitCode: ExitCode.USAGE,
      hint:
        status === 'STOPPING'
          ? 'its jobs are being stopped; `gpunet deployment get` shows when it is STOPPED'
          : undefined,
      fields,
    })
  }
  if (action !== 'stop' && ACTIVE_STATES.has(status)) {
    throw new GpunetError(
      'deployment_running',
      `deployment ${id} is ${status}: it cannot be deleted while its jobs may run`,
      {
        exitCode: ExitCode.USAGE,
        hint:
          status === 'STOPPING'
            ? 'wait until `gpunet deployment get` shows it STOPPED'
            : `stop it first: \`gpunet deployment stop ${id}\``,
        fields,
      },
    )
  }
}
