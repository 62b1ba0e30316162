import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from './base-command.js'
import type {Deployment} from '../lib/deployments/client.js'
import {deploymentLines} from '../lib/deployments/client-render.js'
import type {Network} from '../lib/network.js'
import {connectManager, type ManagerConnection} from '../lib/manager-connection.js'
import {confirmUndoable} from '../lib/terminal/prompt.js'
import {printable} from '../lib/text/terminal-text.js'

/** The deployment's id, as `create` printed it (the id `list` shows). */
export const deploymentArg = {id: Args.string({description: 'deployment id', required: true})}

/** `--yes` of the commands that ask first: stop, delete, withdraw. */
export const yesFlag = Flags.boolean({char: 'y', description: 'go ahead without asking (needed without a terminal)'})

/** The network's deployment object as the manager sent it (snake_case), with gpunet's `network` and `manager`. */
export type DeploymentJson = Deployment & {network: Network; manager: string}

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
  protected deploymentJson(deployment: Deployment, connection: ManagerConnection): DeploymentJson {
    return {...deployment, network: this.settings.network, manager: connection.url}
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
