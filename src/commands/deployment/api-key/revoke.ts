import * as Args from '@oclif/core/args'

import {DeploymentCommand} from '../../../cli/deployment-command.js'
import {deploymentFlags} from '../../../cli/flags.js'

export default class ApiKeyRevoke extends DeploymentCommand {
  static override summary = 'Revoke an API key of the deployment manager: it opens nothing from now on.'

  static override examples = ['<%= config.bin %> deployment api-key revoke 3']

  static override args = {
    id: Args.string({description: 'the key\u2019s id, as `api-key list` shows it', required: true}),
  }
  static override flags = deploymentFlags

  static paysOrDestroys = {what: 'destroys'} as const

  async run(): Promise<{revoked: string; manager: string}> {
    const {args} = await this.parse(ApiKeyRevoke)
    const connection = await this.manager(true)
    await connection.client.revokeApiKey(args.id)
    this.say(`Revoked API key ${args.id}.`)
    return {revoked: args.id, manager: connection.url}
  }
}
