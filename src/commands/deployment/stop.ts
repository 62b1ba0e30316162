import {type DeploymentJson, deploymentArg, DeploymentCommand, yesFlag} from '../../deployment-command.js'
import {deploymentFlags} from '../../flags.js'
import {checkState} from '../../lib/deployments/client-states.js'

export default class DeploymentStop extends DeploymentCommand {
  static override summary = 'Stop a deployment: its manager stops every job it runs (STOPPING, then STOPPED).'

  static override description = `Asks first at a terminal, unless --yes; without a terminal it refuses (exit 2) unless --yes. The jobs' unused deposits return to the vault; \`gpunet deployment withdraw\` then returns the vault to your wallet. A deployment that is not running (DRAFT, STOPPING, STOPPED, ARCHIVED) is exit 2, nothing asked or sent.`

  static override examples = [
    '<%= config.bin %> deployment stop 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU',
    '<%= config.bin %> deployment stop 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --yes --json',
  ]

  static override args = deploymentArg
  static override flags = {yes: yesFlag, ...deploymentFlags}

  async run(): Promise<DeploymentJson> {
    const {args, flags} = await this.parse(DeploymentStop)
    const connection = await this.manager(flags)
    const before = await connection.client.get(args.id)
    checkState(before, 'stop')
    await this.confirmFirst(flags.yes, {
      question: `Stop deployment ${args.id} and every job it runs?`,
      doing: `stop deployment ${args.id}`,
      short: 'stop it',
    })
    await connection.client.stop(args.id)
    const deployment = await connection.client.get(args.id)
    this.say(`Stopping deployment ${args.id}: ${deployment.status}. Then: gpunet deployment withdraw ${args.id}`)
    return this.deploymentJson(deployment, flags.network, connection)
  }
}
