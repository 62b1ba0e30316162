import {deploymentArg, DeploymentCommand, yesFlag} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import {checkState} from '../../lib/deployments/client/client-states.js'

export default class DeploymentDelete extends DeploymentCommand {
  static override summary = 'Delete a stopped deployment from its manager.'

  static override description = `Asks first at a terminal, unless --yes; without a terminal it refuses (exit 2) unless --yes. Only a deployment whose jobs cannot run is deleted: a STARTING, RUNNING, STOPPING or INSUFFICIENT_FUNDS one is exit 2 (stop it first). Withdraw its vault first: what it holds is not returned by a delete.`

  static override examples = ['<%= config.bin %> deployment delete 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --yes']

  static override args = deploymentArg
  static override flags = {yes: yesFlag, ...deploymentFlags}

  static paysOrDestroys = {what: 'destroys'} as const

  async run(): Promise<{deleted: string; network: string; manager: string}> {
    const {args, flags} = await this.parse(DeploymentDelete)
    const connection = await this.manager()
    checkState(await connection.client.get(args.id), 'delete')
    await this.confirmFirst(flags.yes, {
      question: `Delete deployment ${args.id}?`,
      doing: `delete deployment ${args.id}`,
      short: 'delete it',
    })
    await connection.client.remove(args.id)
    this.say(`Deleted deployment ${args.id}.`)
    return {deleted: args.id, network: this.settings.network, manager: connection.url}
  }
}
