import * as Flags from '@oclif/core/flags'

import {type DeploymentJson, deploymentArg, DeploymentCommand, servingWaitFlags} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import {loadPostableDefinition} from '../../lib/definition/upload.js'
import {withExitCodes} from '../../cli/exit-codes.js'
import {latestEventTime} from '../../lib/job/deployment-events.js'

export default class DeploymentRevise extends DeploymentCommand {
  static override summary =
    'Give a deployment a new job definition: a revision its manager rolls out replica by replica.'

  static override description = withExitCodes(
    `The definition is checked as \`deployment create\` checks it, before anything is sent (exit 3, nothing changed). A running deployment gets one new replica at a time; an old one is stopped only once a new one serves (its job running and every exposed port online), so the old keep serving until then. A new replica that fails, or does not serve within 10 minutes (divided by the deployment's time scale), rolls the deployment back to the revision that ran, with a REVISION_ROLLED_BACK event; REVISION_ROLLED_OUT says the rollout is over. A deployment that is not running just takes the revision for its next start.

Without --wait it returns once the revision is the active one. --wait follows the rollout until the new revision serves every replica (REVISION_ROLLED_OUT, or as many of its jobs RUNNING as the deployment keeps replicas), progress on stderr; a rollback is exit 8, so \`gpunet deployment revise ID --file v2.json --wait && next-step\` stops there. --wait-timeout bounds it (124). On a deployment that is not running, --wait returns at once: there is nothing to roll out.`,
    [
      [0, 'the revision was made the active one; with --wait, it serves every replica'],
      [2, 'the deployment is archived'],
      [3, 'invalid definition (nothing sent), or the manager refused it (nothing changed)'],
      [4, '--wait: the deployment ran short of funds (INSUFFICIENT_FUNDS)'],
      [7, 'no such deployment of yours'],
      [8, '--wait: the revision was rolled back (the old replicas keep serving), or the deployment failed (ERROR)'],
      [9, '--wait: the deployment was stopped during the rollout'],
      [124, '--wait: still rolling out after --wait-timeout (its manager goes on)'],
      [130, 'Ctrl+C while waiting (the rollout goes on)'],
    ],
  )

  static override examples = [
    '<%= config.bin %> deployment revise 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --file llm-v2.json',
    '<%= config.bin %> deployment revise 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --file llm-v2.json --wait --wait-timeout 1200',
  ]

  static override args = deploymentArg
  static override flags = {
    file: Flags.string({
      char: 'f',
      description: 'the new job definition file (JSON or YAML; - reads standard input)',
      helpValue: 'FILE',
      required: true,
    }),
    ...servingWaitFlags,
    ...deploymentFlags,
  }

  static paysOrDestroys = {what: 'vault'} as const

  async run(): Promise<DeploymentJson> {
    const {args, flags} = await this.parse(DeploymentRevise)
    const loaded = await loadPostableDefinition(flags.file, this.settings.network)
    for (const w of loaded.warnings) this.note(`Warning: ${flags.file}:${w.line}:${w.column} ${w.path}: ${w.message}`)
    const connection = await this.manager()
    // Only the rollout's own events count: those after the newest one before it.
    const after = flags.wait ? await latestEventTime(connection.client, args.id) : undefined
    const {active_revision: revision} = await connection.client.revise(args.id, loaded.upload.document)
    let deployment = await connection.client.get(args.id)
    if (flags.wait && (deployment.status === 'RUNNING' || deployment.status === 'STARTING')) {
      const serving = await this.waitUntilServing(connection, args.id, flags['wait-timeout'], {revision, after})
      deployment = serving.deployment
      this.say(
        `Revision ${revision} of deployment ${args.id} serves: ${serving.ready} of ${deployment.replicas} replicas ready.`,
      )
      return this.deploymentJson(deployment, connection)
    }
    const follow = `Follow it: gpunet deployment events ${args.id} --follow`
    this.say(
      deployment.status === 'RUNNING'
        ? `Revision ${revision} of deployment ${args.id} is rolling out, one replica at a time. ${follow}`
        : deployment.status === 'STARTING'
          ? `Revision ${revision} of deployment ${args.id} is active: the replicas being listed run it. ${follow}`
          : `Revision ${revision} of deployment ${args.id} is active; it runs from the next start.`,
    )
    return this.deploymentJson(deployment, connection)
  }
}
