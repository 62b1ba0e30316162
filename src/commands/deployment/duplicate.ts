import * as Flags from '@oclif/core/flags'

import {type DeploymentJson, deploymentArg, DeploymentCommand} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import {withExitCodes} from '../../cli/exit-codes.js'
import {duplicateBody} from '../../lib/deployments/client/client-duplicate.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'

export default class DeploymentDuplicate extends DeploymentCommand {
  static override summary = 'Duplicate a deployment: a new one with its settings, vault and active definition.'

  static override description = withExitCodes(
    `The manager's \`duplicate\` (the network's): a new DRAFT named --name (default "<source name> (copy)"), on the source's market unless --market is given, paying from the same vault, with the same replicas, timeout, strategy (its schedule or rotation too) and confidentiality, and the source's active revision as its first revision (listed under the copy's own deployment id). The source is not changed. --start asks the manager to start the copy at once (the API's autostart): when the vault (now the source's and the copy's) does not hold the deposit of one timeout of every replica, the copy is created all the same, INSUFFICIENT_FUNDS, and the command exits 4 with the copy's id, to fund and start.`,
    [
      [0, 'duplicated'],
      [2, 'a bad --name or --market, nothing sent'],
      [3, 'the manager refused the request (a market it does not know, a definition it no longer takes)'],
      [4, '--start, and the vault cannot pay the deposit (the copy is created, INSUFFICIENT_FUNDS: fund it, start it)'],
      [5, 'the manager is unreachable or failing'],
      [6, "the manager refused the wallet's headers or the API key"],
      [7, 'no such deployment of yours (nothing created)'],
    ],
  )

  static override examples = [
    '<%= config.bin %> deployment duplicate 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU',
    '<%= config.bin %> deployment duplicate 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --name llm-canary --start',
    '<%= config.bin %> deployment duplicate 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --market 97G9NnvBDQ2WpKu6fasoMsAKmfj63C9rhysJnkeWodAf --json',
  ]

  static override args = deploymentArg

  static override flags = {
    name: Flags.string({description: 'the copy\'s name [default: "<source name> (copy)"]', helpValue: 'NAME'}),
    market: Flags.string({description: "the copy's market [default: the source's]", helpValue: 'ADDRESS'}),
    start: Flags.boolean({description: 'start the copy at once (the vault must hold its deposit)'}),
    ...deploymentFlags,
  }

  async run(): Promise<DeploymentJson> {
    const {args, flags} = await this.parse(DeploymentDuplicate)
    const body = duplicateBody({name: flags.name, market: flags.market, start: flags.start})
    const connection = await this.manager()
    const copy = await connection.client.duplicate(args.id, body)
    const warnings = flags.start ? this.replicaWarnings(copy.replicas, connection) : []
    this.showDeployment(copy)
    // As `create --start`: the copy exists either way, so its id is on the screen before the refusal.
    const refused =
      copy.status === 'INSUFFICIENT_FUNDS'
        ? new GpunetError(
            'insufficient_funds',
            `duplicated ${args.id} as ${copy.id}, but it did not start: its vault ${copy.vault} does not hold the deposit of one timeout of every replica`,
            {
              exitCode: ExitCode.INSUFFICIENT_BALANCE,
              hint: `fund it, then start it: gpunet deployment fund ${copy.id} --sol 0.05 --tokens 10 && gpunet deployment start ${copy.id}`,
              fields: {deployment: copy.id},
            },
          )
        : null
    if (!refused) {
      this.say()
      this.say(
        copy.status === 'DRAFT'
          ? `Duplicated ${args.id}. Start it: gpunet deployment start ${copy.id}`
          : `Duplicated ${args.id}. Follow it: gpunet deployment events ${copy.id} --follow`,
      )
    }
    return this.failWithReport(this.deploymentJson(copy, connection, warnings), refused)
  }
}
