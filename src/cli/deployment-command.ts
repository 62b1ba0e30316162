import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from './base-command.js'
import {secondsFlag} from './flags.js'
import type {Deployment} from '../lib/deployments/client/client.js'
import {type CommandWarning, replicasBeyondNodes} from '../lib/deployments/client/client-create.js'
import {deploymentLines} from '../lib/deployments/client/client-render.js'
import type {Network} from '../lib/network.js'
import {connectManager, type ManagerConnection} from '../lib/manager-connection.js'
import {confirmUndoable} from '../lib/terminal/prompt.js'
import {type RevisionWatch, type Serving, waitUntilServing} from '../lib/job/deployment-events.js'
import {interruptible} from '../lib/job/stop-signals.js'
import {startProgress} from '../lib/terminal/progress.js'
import {printable} from '../lib/text/terminal-text.js'

/** The deployment's id, as `create` printed it (the id `list` shows). */
export const deploymentArg = {id: Args.string({description: 'deployment id', required: true})}

/** `--wait` and its bound, of the commands that start replicas (`deployment start`, `revise`). */
export const servingWaitFlags = {
  wait: Flags.boolean({
    description:
      'follow it until it serves (RUNNING, every replica ready), progress on stderr; exit non-zero when it fails, is rolled back or stops',
  }),
  'wait-timeout': secondsFlag({
    description: 'how long --wait follows it before exit 124 (its manager goes on)',
    default: 900,
  }),
}

/** `--yes` of the commands that ask first: stop, delete, withdraw. */
export const yesFlag = Flags.boolean({char: 'y', description: 'go ahead without asking (needed without a terminal)'})

/**
 * The network's deployment object as the manager sent it (snake_case), with gpunet's `network` and `manager`, and
 * `warnings` when there are any (replicas beyond a localnet's nodes).
 */
export type DeploymentJson = Deployment & {network: Network; manager: string; warnings?: CommandWarning[]}

/**
 * The base of the `deployment` commands: the manager's client from the settings (`--manager`, else the localnet's
 * own by default), the object as `--json` prints it, and the question before what cannot be undone.
 */
export abstract class DeploymentCommand extends BaseCommand {
  /** The manager of the command's settings; `walletOnly` for the routes an API key may not call. */
  protected manager(walletOnly = false): Promise<ManagerConnection> {
    return connectManager(this.settings, {walletOnly, note: (line) => this.note(line)})
  }

  /** The object `--json` prints: the manager's members as sent, then gpunet's own. */
  protected deploymentJson(
    deployment: Deployment,
    connection: ManagerConnection,
    warnings: CommandWarning[] = [],
  ): DeploymentJson {
    return {
      ...deployment,
      network: this.settings.network,
      manager: connection.url,
      ...(warnings.length > 0 ? {warnings} : {}),
    }
  }

  /**
   * Says on stderr, and returns for `--json`'s `warnings`, that the localnet runs fewer nodes than `replicas`
   * (the rest would stay QUEUED); nothing for any other manager.
   */
  protected replicaWarnings(replicas: number, connection: ManagerConnection): CommandWarning[] {
    const warning = replicasBeyondNodes(replicas, connection.localnetNodes)
    if (!warning) return []
    this.note(`Warning: ${warning.message}`)
    if (warning.hint) this.note(`Hint: ${warning.hint}`)
    return [warning]
  }

  /**
   * `--wait`: follows the deployment until it serves (waitUntilServing), with progress on stderr; the Serving
   * seen, or the failure that ended the wait thrown.
   */
  protected async waitUntilServing(
    connection: ManagerConnection,
    id: string,
    timeoutS: number,
    revision?: RevisionWatch,
  ): Promise<Serving> {
    const what = revision
      ? `Rolling out revision ${revision.revision} of deployment ${id}`
      : `Starting deployment ${id}`
    const progress = startProgress(`${what}: waiting for its replicas`)
    try {
      return await interruptible((signal) =>
        waitUntilServing(connection.client, id, {
          timeoutMs: timeoutS * 1000,
          signal,
          revision,
          progress: (status) => progress.update(`${what}: ${status}`),
        }),
      )
    } finally {
      progress.stop()
    }
  }

  /** Prints a deployment for a person; the manager's words stripped of control sequences on a terminal. */
  protected showDeployment(deployment: Deployment): void {
    for (const line of deploymentLines(deployment)) this.say(printable(line, process.stdout))
  }

  /** Asks at a terminal unless `--yes`; refuses without one (exit 2), as `localnet reset` does. */
  protected async confirmFirst(yes: boolean, what: {question: string; doing: string; short: string}): Promise<void> {
    if (yes) return
    await confirmUndoable({...what, spared: 'Cancelled: nothing was changed.'})
  }
}
