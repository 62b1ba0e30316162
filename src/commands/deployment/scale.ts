import * as Args from '@oclif/core/args'

import {type DeploymentJson, deploymentArg, DeploymentCommand} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import {checkScaleReplicas, MAX_REPLICAS} from '../../lib/deployments/client/client.js'
import {scaleMeaning} from '../../lib/deployments/client/client-scale.js'
import {withExitCodes} from '../../cli/exit-codes.js'

export default class DeploymentScale extends DeploymentCommand {
  static override summary = 'Change how many replicas a deployment keeps running (0 keeps it running with no job).'

  static override description = withExitCodes(
    `The manager lists the shortfall, or stops the excess (queued jobs first, then the oldest running). 0 keeps the deployment RUNNING with no job: its jobs are stopped and nothing is listed, extended or spent until \`scale ID N\` lists again. A count set by hand ends an autoscaling policy (said in the output; \`gpunet deployment autoscale\` sets one again). A larger count needs the vault to pay the new replicas (\`gpunet deployment fund\`); follow the change with \`gpunet deployment events ID --follow\`. On the localnet, more replicas than its nodes (one job each) is warned of (stderr, and warnings[] under --json): the rest would stay QUEUED until \`gpunet localnet start --nodes N\`. --json prints the deployment with \`scaled\`: the count before and after, what it means, and \`autoscale_ended\` (true when a policy was ended).`,
    [
      [0, 'the manager took the new count'],
      [2, `N not a whole number from 0 to ${MAX_REPLICAS}, nothing sent; or the deployment is archived`],
      [7, 'no such deployment of yours'],
    ],
  )

  static override examples = [
    '<%= config.bin %> deployment scale 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU 3',
    '<%= config.bin %> deployment scale 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU 0',
  ]

  static override args = {
    ...deploymentArg,
    replicas: Args.string({description: `replicas to keep running (0 to ${MAX_REPLICAS})`, required: true}),
  }

  static override flags = deploymentFlags

  static paysOrDestroys = {what: 'vault'} as const

  async run(): Promise<
    DeploymentJson & {scaled: {from: number; to: number; meaning: string; autoscale_ended: boolean}}
  > {
    const {args} = await this.parse(DeploymentScale)
    const replicas = checkScaleReplicas(args.replicas)
    const connection = await this.manager()
    const warnings = this.replicaWarnings(replicas, connection)
    const before = await connection.client.get(args.id)
    // The count the manager answers it took: what it means is said of that one.
    const taken = (await connection.client.scale(args.id, replicas)).replicas
    const deployment = await connection.client.get(args.id)
    const meaning = scaleMeaning(taken)
    this.say(`Deployment ${args.id}: ${before.replicas} -> ${taken} replicas: ${meaning}.`)
    // The manager ends a policy when the count is set by hand (operations.ts' updateReplicas).
    const ended = before.autoscale !== undefined && deployment.autoscale === undefined
    if (ended)
      this.say('Autoscaling ended: the count is yours now (gpunet deployment autoscale ID ... sets a policy again).')
    this.say(`Follow it: gpunet deployment events ${args.id} --follow`)
    const scaled = {from: before.replicas, to: taken, meaning, autoscale_ended: ended}
    return {...this.deploymentJson(deployment, connection, warnings), scaled}
  }
}
