import * as Flags from '@oclif/core/flags'

import {type DeploymentJson, deploymentArg, DeploymentCommand} from '../../cli/deployment-command.js'
import {autoscaleFlags, deploymentFlags} from '../../cli/flags.js'
import {autoscaleLines} from '../../lib/deployments/client/client-render.js'
import {
  budgetFromFlag,
  givesPolicy,
  policyFromFlags,
  policyRequest,
  refuseOnHostedManager,
} from '../../lib/deployments/client/client-autoscale.js'
import type {AutoscalePolicy} from '../../lib/deployments/autoscale/policy.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {withExitCodes} from '../../cli/exit-codes.js'
import {printable} from '../../lib/text/terminal-text.js'

export default class DeploymentAutoscale extends DeploymentCommand {
  static override summary =
    "Set, change or end a deployment's autoscaling policy and budget (gpunet's manager, behind its gateway)."

  static override description = withExitCodes(
    `The manager's tick follows the traffic its gateway sees: up at once to ceil((in flight + held) / --target-concurrency), at most --max-replicas; down one replica at a time once the load has fitted in one replica less at 70% of target for --scale-down-after (default 5m, at least 10s, divided by the time scale); never below --min-replicas (0 scales to zero when idle: a request then is held while a replica starts). A replica scaled away is drained first. Each decision is an event (\`gpunet deployment events ID\`). A flag left out keeps what the policy has; --off ends the policy (the replicas stay as they are), as \`gpunet deployment scale ID N\` does. --budget AMOUNT (tokens) caps the spend: no listing or extension takes it past, and the deployment stops (event BUDGET_REACHED) when none fits. SIMPLE-EXTEND and INFINITE take a policy; SIMPLE and SCHEDULED refuse it. The network's hosted manager takes neither: front it with \`gpunet deployment serve\`. --json prints the deployment, with \`autoscale\` and \`budget\` as the manager keeps them.`,
    [
      [0, 'the manager took the policy'],
      [
        2,
        "a bad policy or budget (min above max, max over 100, target 0 or less, a window under 10s, a policy on SIMPLE or SCHEDULED, a budget under one listing's deposit), no flag, or the network's hosted manager: nothing changed",
      ],
      [7, 'no such deployment of yours'],
    ],
  )

  static override examples = [
    '<%= config.bin %> deployment autoscale 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --min-replicas 0 --max-replicas 3 --target-concurrency 2',
    '<%= config.bin %> deployment autoscale 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --scale-down-after 10m --budget 40',
    '<%= config.bin %> deployment autoscale 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --off',
  ]

  static override args = deploymentArg

  static override flags = {
    ...autoscaleFlags,
    off: Flags.boolean({description: 'end the policy: the replicas stay as they are, set by hand from now on'}),
    ...deploymentFlags,
  }

  async run(): Promise<DeploymentJson> {
    const {args, flags} = await this.parse(DeploymentAutoscale)
    const budget = budgetFromFlag(flags.budget)
    if (flags.off && givesPolicy(flags))
      throw new GpunetError('invalid_flags', '--off ends the policy: it takes no policy flag', {
        exitCode: ExitCode.USAGE,
        hint: 'give --off alone (or with --budget), or the policy flags without it; nothing was changed',
      })
    if (!flags.off && !givesPolicy(flags) && budget === undefined)
      throw new GpunetError('invalid_flags', 'nothing to change: give the policy flags, --budget, or --off', {
        exitCode: ExitCode.USAGE,
        hint: 'e.g. --max-replicas 3 --target-concurrency 2; nothing was changed',
      })
    const connection = await this.manager()
    refuseOnHostedManager(connection.hosted, true)
    const before = await connection.client.get(args.id)
    const current = (before.autoscale as AutoscalePolicy | undefined) ?? null
    const policy = flags.off ? null : policyFromFlags(flags, before.strategy, current)
    const body = {
      ...(policy === undefined ? {} : {autoscale: policy && {...policy}}),
      ...(budget === undefined ? {} : {budget}),
    }
    await policyRequest(() => connection.client.updateAutoscale(args.id, body))
    const deployment = await connection.client.get(args.id)
    this.showDeployment(deployment)
    for (const line of autoscaleLines(await connection.client.autoscaleStatus(args.id)))
      this.say(printable(line, process.stdout))
    this.say(`Follow its decisions: gpunet deployment events ${args.id} --follow`)
    return this.deploymentJson(deployment, connection)
  }
}
