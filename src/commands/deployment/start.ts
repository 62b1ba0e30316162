import {type DeploymentJson, deploymentArg, DeploymentCommand} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import {withExitCodes} from '../../cli/exit-codes.js'

export default class DeploymentStart extends DeploymentCommand {
  static override summary = 'Start a deployment: its manager lists its replicas and keeps them as its strategy says.'

  static override description = withExitCodes(
    `Allowed from DRAFT, STOPPED, ERROR and INSUFFICIENT_FUNDS. The vault must hold what one timeout of every replica costs (exit 4 otherwise: \`gpunet deployment fund\`).`,
    [
      [0, 'STARTING'],
      [2, 'its state does not allow a start'],
      [4, 'the vault cannot pay one timeout of every replica'],
      [7, 'no such deployment of yours'],
    ],
  )

  static override examples = ['<%= config.bin %> deployment start 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU']

  static override args = deploymentArg
  static override flags = deploymentFlags

  async run(): Promise<DeploymentJson> {
    const {args} = await this.parse(DeploymentStart)
    const connection = await this.manager()
    await connection.client.start(args.id)
    const deployment = await connection.client.get(args.id)
    this.say(
      `Started deployment ${args.id}: ${deployment.status}. Follow it: gpunet deployment events ${args.id} --follow`,
    )
    return this.deploymentJson(deployment, connection)
  }
}
