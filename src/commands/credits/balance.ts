import {DeploymentCommand} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import {creditBalance, type CreditsJson, creditsJson} from '../../lib/credits/client.js'
import {amountText, reportLines} from '../../lib/market/jobs/report.js'
import type {Network} from '../../lib/network.js'

interface BalanceReport {
  network: Network
  manager: string
  credits: CreditsJson
}

export default class CreditsBalance extends DeploymentCommand {
  static override summary = "Show your credits on the network's API: given, held by running jobs, spent, available."

  static override description = `Credits pay for jobs without a wallet's tokens (\`job post --credits\`). They are read from the network's public API (on devnet and mainnet; the manager setting) or the localnet's, which \`localnet fund --credits N\` tops up, with your API key (--api-key, GPUNET_API_KEY): the network's API takes credits from an API key. A running job holds its price x timeout; once it ends, what it ran is spent and the rest is available again.`

  static override examples = [
    '<%= config.bin %> credits balance',
    'GPUNET_API_KEY=... <%= config.bin %> credits balance --network mainnet --json',
  ]

  static override flags = deploymentFlags

  async run(): Promise<BalanceReport> {
    await this.parse(CreditsBalance)
    const connection = await this.manager()
    const credits = creditsJson(await creditBalance(connection.client))
    this.say(`Credits on ${this.settings.network} (${connection.url})`)
    for (const line of reportLines([
      ['Available', amountText(credits.available)],
      ['Assigned', amountText(credits.assigned)],
      ['Reserved', amountText(credits.reserved)],
      ['Settled', amountText(credits.settled)],
    ]))
      this.say(line)
    return {network: this.settings.network, manager: connection.url, credits}
  }
}
