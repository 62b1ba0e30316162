import * as Flags from '@oclif/core/flags'

import {type DeploymentJson, deploymentArg, DeploymentCommand, yesFlag} from '../../cli/deployment-command.js'
import {deploymentFlags, secondsFlag} from '../../cli/flags.js'
import {checkState} from '../../lib/deployments/client/client-states.js'
import {waitForStatus} from '../../lib/job/deployment-events.js'
import {interruptible} from '../../lib/job/stop-signals.js'
import {startProgress} from '../../lib/terminal/progress.js'
import {withExitCodes} from '../../cli/exit-codes.js'

export default class DeploymentStop extends DeploymentCommand {
  static override summary = 'Stop a deployment: its manager stops every job it runs; waits until it is STOPPED.'

  static override description = withExitCodes(
    `Asks first at a terminal, unless --yes; without a terminal it refuses (exit 2) unless --yes. The jobs' unused deposits return to the vault; \`gpunet deployment withdraw\` then returns the vault to your wallet. It waits until the manager has stopped every job (STOPPED), with progress on stderr (--no-wait returns at STOPPING; --wait-timeout bounds it: exit 124). A deployment that is not running (DRAFT, STOPPING, STOPPED, ARCHIVED) is exit 2, nothing asked or sent.`,
    [
      [0, 'STOPPED (with --no-wait: STOPPING)'],
      [2, 'it is not running; no terminal to confirm and no --yes'],
      [7, 'no such deployment of yours'],
      [124, 'still STOPPING after --wait-timeout (its manager goes on)'],
      [130, 'cancelled at the question, or Ctrl+C while waiting (it goes on stopping)'],
    ],
  )

  static override examples = [
    '<%= config.bin %> deployment stop 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU',
    '<%= config.bin %> deployment stop 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --yes --json',
  ]

  static override args = deploymentArg
  static override flags = {
    yes: yesFlag,
    wait: Flags.boolean({
      description: 'wait until its jobs are stopped (STOPPED), progress on stderr; --no-wait returns at STOPPING',
      default: true,
      allowNo: true,
    }),
    'wait-timeout': secondsFlag({
      description: 'how long to wait for STOPPED before exit 124 (the manager goes on)',
      default: 300,
    }),
    ...deploymentFlags,
  }

  static paysOrDestroys = {what: 'destroys'} as const

  async run(): Promise<DeploymentJson> {
    const {args, flags} = await this.parse(DeploymentStop)
    const connection = await this.manager()
    const before = await connection.client.get(args.id)
    checkState(before, 'stop')
    await this.confirmFirst(flags.yes, {
      question: `Stop deployment ${args.id} and every job it runs?`,
      doing: `stop deployment ${args.id}`,
      short: 'stop it',
    })
    await connection.client.stop(args.id)
    if (flags.wait) {
      const progress = startProgress(`Stopping deployment ${args.id}: its manager stops its jobs`)
      try {
        await interruptible((signal) =>
          waitForStatus(connection.client, args.id, (status) => status !== 'STOPPING', {
            timeoutMs: flags['wait-timeout'] * 1000,
            signal,
            progress: (status) => progress.update(`Stopping deployment ${args.id}: ${status}`),
          }),
        )
      } finally {
        progress.stop()
      }
    }
    const deployment = await connection.client.get(args.id)
    this.say(
      deployment.status === 'STOPPED'
        ? `Stopped deployment ${args.id}. Its vault back to your wallet: gpunet deployment withdraw ${args.id}`
        : `Deployment ${args.id} is ${deployment.status}.`,
    )
    return this.deploymentJson(deployment, connection)
  }
}
