import * as Flags from '@oclif/core/flags'

import {DeploymentCommand} from '../../../cli/deployment-command.js'
import {deploymentFlags} from '../../../cli/flags.js'
import type {ApiKey} from '../../../lib/deployments/client/client.js'
import {printable} from '../../../lib/text/terminal-text.js'

export default class ApiKeyCreate extends DeploymentCommand {
  static override summary = 'Make an API key for the deployment manager: scripts and CI use it instead of your wallet.'

  static override description = `The key is printed once, on stdout, and the manager keeps only its hash: store it where your scripts read secrets. They send it as GPUNET_MANAGER_API_KEY (or the managerApiKey setting: \`gpunet config set managerApiKey\` reads it from standard input). It acts as your wallet on your deployments, except that it cannot make or revoke keys: those take the wallet's headers. \`gpunet deployment api-key revoke ID\` ends it.`

  static override examples = [
    '<%= config.bin %> deployment api-key create --name ci',
    '<%= config.bin %> deployment api-key create --name ci --json | jq -r .key',
  ]

  static override flags = {
    name: Flags.string({description: 'a name to tell keys apart', helpValue: 'NAME'}),
    ...deploymentFlags,
  }

  static mcp = {exclude: 'prints a new API key, a secret'}

  async run(): Promise<ApiKey & {key: string; manager: string}> {
    const {flags} = await this.parse(ApiKeyCreate)
    const connection = await this.manager(true)
    const made = await connection.client.createApiKey(flags.name)
    this.note(
      `Made API key ${made.id}${made.name ? ` (${printable(made.name, process.stderr)})` : ''}; it is shown this once:`,
    )
    this.say(made.key)
    return {...made, manager: connection.url}
  }
}
