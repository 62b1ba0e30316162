import * as Flags from '@oclif/core/flags'

import {type DeploymentJson, deploymentArg, DeploymentCommand} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import {loadPostableDefinition} from '../../lib/definition/upload.js'
import {withExitCodes} from '../../cli/exit-codes.js'

export default class DeploymentRevise extends DeploymentCommand {
  static override summary =
    'Give a deployment a new job definition: a revision its manager rolls out replica by replica.'

  static override description = withExitCodes(
    `The definition is checked as \`deployment create\` checks it, before anything is sent (exit 3, nothing changed). A running deployment gets one new replica at a time; an old one is stopped only once a new one serves (its job running and every exposed port online), so the old keep serving until then. A new replica that fails, or does not serve within 10 minutes (divided by the deployment's time scale), rolls the deployment back to the revision that ran, with a REVISION_ROLLED_BACK event; REVISION_ROLLED_OUT says the rollout is over. A deployment that is not running just takes the revision for its next start.`,
    [
      [0, 'the revision was made the active one'],
      [2, 'the deployment is archived'],
      [3, 'invalid definition (nothing sent), or the manager refused it (nothing changed)'],
      [7, 'no such deployment of yours'],
    ],
  )

  static override examples = [
    '<%= config.bin %> deployment revise 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --file llm-v2.json',
  ]

  static override args = deploymentArg
  static override flags = {
    file: Flags.string({
      char: 'f',
      description: 'the new job definition file (JSON or YAML; - reads standard input)',
      helpValue: 'FILE',
      required: true,
    }),
    ...deploymentFlags,
  }

  async run(): Promise<DeploymentJson> {
    const {args, flags} = await this.parse(DeploymentRevise)
    const loaded = await loadPostableDefinition(flags.file, this.settings.network)
    for (const w of loaded.warnings) this.note(`Warning: ${flags.file}:${w.line}:${w.column} ${w.path}: ${w.message}`)
    const connection = await this.manager()
    const {active_revision: revision} = await connection.client.revise(args.id, loaded.upload.document)
    const deployment = await connection.client.get(args.id)
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
