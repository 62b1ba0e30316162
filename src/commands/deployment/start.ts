import {type DeploymentJson, deploymentArg, DeploymentCommand, servingWaitFlags} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import {withExitCodes} from '../../cli/exit-codes.js'

export default class DeploymentStart extends DeploymentCommand {
  static override summary = 'Start a deployment: its manager lists its replicas and keeps them as its strategy says.'

  static override description = withExitCodes(
    `Allowed from DRAFT, STOPPED, ERROR and INSUFFICIENT_FUNDS. The vault must hold what one timeout of every replica costs (exit 4 otherwise: \`gpunet deployment fund\`); a shared vault must also keep what its other running deployments need for their next listing or extension of every replica: it covers all of them. On the localnet, more replicas than its nodes (one job each) is warned of (stderr, and warnings[] under --json): the rest would stay QUEUED until \`gpunet localnet start --nodes N\`.

Without --wait it returns at STARTING. --wait follows it until it is RUNNING with every replica ready (its job RUNNING, each endpoint the manager sees online), progress on stderr, so \`gpunet deployment start ID --wait && next-step\` goes on only once it serves; it fails as the deployment does (ERROR 8, out of funds 4, stopped 9), and --wait-timeout bounds it (124).`,
    [
      [0, 'STARTING; with --wait, RUNNING with every replica ready'],
      [2, 'its state does not allow a start'],
      [
        4,
        'the vault cannot pay one timeout of every replica on top of what its other running deployments need (with --wait: it ran short, INSUFFICIENT_FUNDS)',
      ],
      [7, 'no such deployment of yours'],
      [8, '--wait: it failed (ERROR)'],
      [9, '--wait: it was stopped or archived before it served'],
      [124, '--wait: not serving after --wait-timeout (its manager goes on)'],
      [130, 'Ctrl+C while waiting (it goes on starting)'],
    ],
  )

  static override examples = [
    '<%= config.bin %> deployment start 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU',
    '<%= config.bin %> deployment start 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --wait --wait-timeout 600 && curl -fsS "$URL"',
  ]

  static override args = deploymentArg
  static override flags = {...servingWaitFlags, ...deploymentFlags}

  static paysOrDestroys = {what: 'vault'} as const

  async run(): Promise<DeploymentJson> {
    const {args, flags} = await this.parse(DeploymentStart)
    const connection = await this.manager()
    await connection.client.start(args.id)
    let deployment = await connection.client.get(args.id)
    const warnings = this.replicaWarnings(deployment.replicas, connection)
    if (flags.wait) {
      const serving = await this.waitUntilServing(connection, args.id, flags['wait-timeout'])
      deployment = serving.deployment
      this.say(
        `Deployment ${args.id} is ${deployment.status}: ${serving.ready} of ${deployment.replicas} replicas ready.`,
      )
      return this.deploymentJson(deployment, connection, warnings)
    }
    this.say(
      `Started deployment ${args.id}: ${deployment.status}. Follow it: gpunet deployment events ${args.id} --follow`,
    )
    return this.deploymentJson(deployment, connection, warnings)
  }
}
