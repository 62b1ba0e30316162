import * as Args from '@oclif/core/args'

import {type DeploymentJson, deploymentArg, DeploymentCommand} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import {checkReplicas, MAX_REPLICAS} from '../../lib/deployments/client/client-create.js'
import {withExitCodes} from '../../cli/exit-codes.js'

export default class DeploymentScale extends DeploymentCommand {
  static override summary = 'Change how many replicas a deployment keeps running.'

  static override description = withExitCodes(
    `The manager lists the shortfall, or stops the excess (queued jobs first, then the newest). A larger count needs the vault to pay the new replicas (\`gpunet deployment fund\`); follow the change with \`gpunet deployment events ID --follow\`. On the localnet, more replicas than its nodes (one job each) is warned of (stderr, and warnings[] under --json): the rest would stay QUEUED until \`gpunet localnet start --nodes N\`.`,
    [
      [0, 'the manager took the new count'],
      [2, `N outside 1..${MAX_REPLICAS}, nothing sent; or the deployment is archived`],
      [7, 'no such deployment of yours'],
    ],
  )

  static override examples = ['<%= config.bin %> deployment scale 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU 3']

  static override args = {
    ...deploymentArg,
    replicas: Args.integer({description: `replicas to keep running (1 to ${MAX_REPLICAS})`, required: true}),
  }

  static override flags = deploymentFlags

  async run(): Promise<DeploymentJson> {
    const {args} = await this.parse(DeploymentScale)
    const replicas = checkReplicas(args.replicas)
    const connection = await this.manager()
    const warnings = this.replicaWarnings(replicas, connection)
    const before = await connection.client.get(args.id)
    await connection.client.scale(args.id, replicas)
    const deployment = await connection.client.get(args.id)
    this.say(
      `Deployment ${args.id}: ${before.replicas} -> ${deployment.replicas} replicas. Follow it: gpunet deployment events ${args.id} --follow`,
    )
    return this.deploymentJson(deployment, connection, warnings)
  }
}
