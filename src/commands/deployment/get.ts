import {type DeploymentJson, deploymentArg, DeploymentCommand} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import {sharedText, vaultSharers} from '../../lib/deployments/client/client-vault.js'
import {autoscaleLines} from '../../lib/deployments/client/client-render.js'
import {isGpunetError} from '../../lib/errors.js'
import {printable} from '../../lib/text/terminal-text.js'

export default class DeploymentGet extends DeploymentCommand {
  static override summary = 'Show a deployment: its state, replicas, timeout, vault and endpoints, each with its kind.'

  static override description = `--json prints the network's deployment object with its own member names (snake_case: status, replicas, timeout in minutes, vault, active_revision, active_jobs, endpoints, created_at...), exactly as the manager sent it, plus gpunet's network and manager. The text shows each endpoint with its kind: deployment (the network's load-balanced URL, one per exposed operation), stable (gpunet's stable URL, behind the localnet's gateway) or replica (one replica's own), and the vault's other deployments (shared_with under --json): a shared vault pays for all of them, and its balance keeps what its running ones need (\`gpunet deployment withdraw\`). From gpunet's own manager it shows autoscaling and cost too (\`autoscale_status\` under --json): the policy, the traffic its gateway sees and the replicas, the spend so far against the budget, the burn rate at the current replicas, and how long the vault lasts at the rate of every running deployment it pays for. Another owner's deployment is not found (exit 7).`

  static override examples = ['<%= config.bin %> deployment get 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --json']

  static override args = deploymentArg
  static override flags = deploymentFlags

  async run(): Promise<DeploymentJson> {
    const {args} = await this.parse(DeploymentGet)
    const connection = await this.manager()
    const deployment = await connection.client.get(args.id)
    this.showDeployment(deployment)
    // A manager that does not filter by vault (a stand-in, an older one) leaves the vault's sharing unsaid.
    const sharers = await vaultSharers(connection.client, deployment.vault, args.id).catch((error: unknown) => {
      if (isGpunetError(error)) return null
      throw error
    })
    if (sharers) this.say(`  vault use:  ${sharedText(sharers)}`)
    // The network's hosted manager has no such route; a gpunet manager before autoscaling neither (its 404).
    const status = connection.hosted
      ? null
      : await connection.client.autoscaleStatus(args.id).catch((error: unknown) => {
          if (isGpunetError(error)) return null
          throw error
        })
    if (status) for (const line of autoscaleLines(status)) this.say(printable(line, process.stdout))
    return {
      ...this.deploymentJson(deployment, connection),
      ...(sharers ? {shared_with: sharers} : {}),
      ...(status ? {autoscale_status: status} : {}),
    }
  }
}
