import * as Flags from '@oclif/core/flags'

import {type DeploymentJson, deploymentArg, DeploymentCommand} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import {checkState} from '../../lib/deployments/client/client-states.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {parseAddress} from '../../lib/market/connect.js'
import {withExitCodes} from '../../cli/exit-codes.js'

/** What `deployment move` adds to the deployment under `--json`. */
interface Moved {
  from: string
  to: string
  /** True while gpunet's manager moves running replicas; false when nothing ran (DRAFT, STOPPED) or the network's manager relisted them. */
  moving: boolean
  how: string
}

export default class DeploymentMove extends DeploymentCommand {
  static override summary =
    "Move a deployment to another market (the manager's update-market), without a gap in service."

  static override description = withExitCodes(
    `On gpunet's manager a RUNNING deployment moves make-before-break: every replica is listed on --market beside the old ones, and only once as many new replicas are ready (RUNNING, every exposed port online: the readiness a rollout waits for) are the old ones drained (the stable URL sends them no new request, those in flight finish) and stopped. The whole deployment moves, never half: a new replica that ends on its own, or fewer ready than the deployment keeps within 10 minutes (divided by --time-scale), rolls the move back, the new replicas stopped and the old kept, with an event saying why. A manager restarted mid-move finishes it or rolls it back. The network's own manager stops the running jobs first and relists them on the new market (a gap in service). A DRAFT or STOPPED deployment runs nothing: its market is changed at once. Follow a move with \`gpunet deployment events ID --follow\` (DEPLOYMENT_MOVE_STARTED, DEPLOYMENT_MOVE_DRAINING, DEPLOYMENT_MOVED or DEPLOYMENT_MOVE_ROLLED_BACK). --json prints the deployment with \`moved\`: from, to, moving and how.`,
    [
      [0, 'the manager took the move (or changed the market of a deployment that runs nothing)'],
      [
        2,
        '--market is not an address or is the market it is on; the deployment is starting, stopping, failed, short of funds, archived, rolling out a revision or moving already (nothing sent, or the manager refused it: 409)',
      ],
      [3, 'the manager does not know the market'],
      [
        4,
        "the vault cannot pay the new replicas' deposit beside the old ones' (one timeout of every replica on the new market, as a start needs; nothing changed)",
      ],
      [7, 'no such deployment of yours'],
    ],
  )

  static override examples = [
    '<%= config.bin %> deployment move 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --market 97G9NnvBDQ2WpKu6fasoMsAKmfj63C9rhysJnkeWodAf',
    '<%= config.bin %> deployment move 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --market 97G9NnvBDQ2WpKu6fasoMsAKmfj63C9rhysJnkeWodAf --json',
  ]

  static override args = deploymentArg
  static override flags = {
    market: Flags.string({description: 'the market to move to', helpValue: 'ADDRESS', required: true}),
    ...deploymentFlags,
  }

  static paysOrDestroys = {what: 'vault'} as const

  async run(): Promise<DeploymentJson & {moved: Moved}> {
    const {args, flags} = await this.parse(DeploymentMove)
    const to = parseAddress(flags.market, '--market').toBase58()
    const connection = await this.manager()
    const before = await connection.client.get(args.id)
    if (before.market === to)
      throw new GpunetError('same_market', `deployment ${args.id} is on the market ${to} already`, {
        exitCode: ExitCode.USAGE,
        hint: '`gpunet market list` shows the markets; nothing was sent',
        fields: {deployment: args.id, market: to},
      })
    checkState(before, 'move')
    const answer = await connection.client.move(args.id, to)
    const deployment = await connection.client.get(args.id)
    const moving = typeof answer.move_from === 'string'
    const how = moving
      ? `its replicas are listed on ${to}; the ones on ${before.market} are drained and stopped once the new are ready, else the move is rolled back`
      : before.status === 'RUNNING'
        ? `the manager stops the running jobs and relists them on ${to}`
        : `nothing runs: the market is changed`
    this.say(`Deployment ${args.id}: ${before.market} -> ${answer.market}: ${how}.`)
    if (before.status === 'RUNNING') this.say(`Follow it: gpunet deployment events ${args.id} --follow`)
    return {
      ...this.deploymentJson(deployment, connection),
      moved: {from: before.market, to: answer.market, moving, how},
    }
  }
}
