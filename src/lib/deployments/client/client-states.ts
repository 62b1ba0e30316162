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

/** The states a move is taken in (the manager's rule): RUNNING moves, DRAFT and STOPPED change market at once. */
const MOVABLE: ReadonlySet<string> = new Set(['RUNNING', 'DRAFT', 'STOPPED'])

/** What is being done to a deployment, for the checks below. */
export type StateAction = 'stop' | 'delete' | 'move'

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
  if (action === 'move') {
    if (MOVABLE.has(status)) return
    throw new GpunetError(
      status === 'ARCHIVED' ? 'deployment_archived' : 'deployment_not_running',
      `deployment ${id} is ${status}: only a RUNNING deployment moves (a DRAFT or STOPPED one changes market at once)`,
      {
        exitCode: ExitCode.USAGE,
        hint:
          status === 'ARCHIVED'
            ? `an archived deployment runs nothing again: copy it onto the market, \`gpunet deployment duplicate ${id} --market ADDRESS\``
            : 'wait until `gpunet deployment get` shows it RUNNING, or stop it first',
        fields,
      },
    )
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
