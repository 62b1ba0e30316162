import * as Flags from '@oclif/core/flags'

import {type DeploymentJson, DeploymentCommand} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import {deploymentRows} from '../../lib/deployments/client/client-render.js'
import {printable} from '../../lib/text/terminal-text.js'

export default class DeploymentList extends DeploymentCommand {
  static override summary = 'List your deployments at the manager, newest first.'

  static override description = `One page at a time (--limit, --cursor: under --json, pagination.cursor_next names the next page). --status filters by state (comma-separated: RUNNING,INSUFFICIENT_FUNDS).`

  static override examples = [
    '<%= config.bin %> deployment list',
    '<%= config.bin %> deployment list --status RUNNING --json',
  ]

  static override flags = {
    status: Flags.string({description: 'only deployments in these states (comma-separated)', helpValue: 'STATUS'}),
    limit: Flags.integer({description: 'deployments per page', options: ['10', '20', '50', '100'], default: 50}),
    cursor: Flags.string({
      description: 'the page after this cursor (pagination.cursor_next of --json)',
      helpValue: 'CURSOR',
    }),
    ...deploymentFlags,
  }

  async run(): Promise<{deployments: DeploymentJson[]; pagination: {cursor_next: string | null}}> {
    const {flags} = await this.parse(DeploymentList)
    const connection = await this.manager()
    const page = await connection.client.list({
      status: flags.status,
      limit: flags.limit as 10 | 20 | 50 | 100,
      cursor: flags.cursor,
      sort_order: 'desc',
    })
    if (page.deployments.length === 0) this.say(`No deployments at ${connection.url}.`)
    for (const line of deploymentRows(page.deployments)) this.say(printable(line, process.stdout))
    if (page.pagination.cursor_next) this.say(`More: gpunet deployment list --cursor ${page.pagination.cursor_next}`)
    return {
      deployments: page.deployments.map((d) => this.deploymentJson(d, connection)),
      pagination: page.pagination,
    }
  }
}
