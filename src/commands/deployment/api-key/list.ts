import {DeploymentCommand} from '../../../cli/deployment-command.js'
import {deploymentFlags} from '../../../cli/flags.js'
import type {ApiKey} from '../../../lib/deployments/client/client.js'
import {apiKeyRows} from '../../../lib/deployments/client/client-render.js'
import {printable} from '../../../lib/text/terminal-text.js'

export default class ApiKeyList extends DeploymentCommand {
  static override summary =
    "List your deployment manager's API keys (their ids and names; the keys themselves are never shown again)."

  static override examples = [
    '<%= config.bin %> deployment api-key list',
    '<%= config.bin %> deployment api-key list --json',
  ]

  static override flags = deploymentFlags

  async run(): Promise<{keys: ApiKey[]; manager: string}> {
    await this.parse(ApiKeyList)
    const connection = await this.manager(true)
    const keys = await connection.client.listApiKeys()
    if (keys.length === 0) this.say(`No API keys at ${connection.url}.`)
    for (const line of apiKeyRows(keys)) this.say(printable(line, process.stdout))
    return {keys, manager: connection.url}
  }
}
