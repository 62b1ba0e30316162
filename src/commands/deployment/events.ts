import * as Flags from '@oclif/core/flags'

import {writeLine} from '../../cli/base-command.js'
import {deploymentArg, DeploymentCommand} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import {deploymentEvents} from '../../lib/job/deployment-events.js'
import {eventLine} from '../../lib/deployments/client/client-render.js'
import {interruptible} from '../../lib/job/stop-signals.js'
import {printable} from '../../lib/text/terminal-text.js'

export default class DeploymentEvents extends DeploymentCommand {
  static override summary =
    "Print a deployment's events: jobs listed, extended and stopped, funds short, state changes."

  static override description = `Oldest first. --follow prints new events as the manager records them, until the deployment is STOPPED or ARCHIVED (Ctrl+C ends it earlier; the deployment goes on).

--json prints one JSON object per line, each event as the manager sends it, with the network's member names ({"category", "deploymentId", "type", "message", "tx", "created_at"}), and an {"error": ...} object last if reading fails.`

  static override examples = [
    '<%= config.bin %> deployment events 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --follow',
    '<%= config.bin %> deployment events 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --json | jq -r \'select(.type == "JOB_EXTEND_SUCCESSFUL") | .tx\'',
  ]

  static override args = deploymentArg
  static override flags = {
    follow: Flags.boolean({char: 'f', description: 'print new events as they come, until the deployment is STOPPED'}),
    ...deploymentFlags,
  }

  /** Under --json the output is JSON lines: the error document is the last line, on one line. */
  static override jsonLines = true

  async run(): Promise<void> {
    const {args, flags} = await this.parse(DeploymentEvents)
    const json = this.jsonEnabled()
    const connection = await this.manager()
    const {events} = await interruptible((signal) =>
      deploymentEvents(connection.client, args.id, {
        follow: flags.follow,
        signal,
        event: (event) => writeLine(json ? JSON.stringify(event) : printable(eventLine(event), process.stdout)),
      }),
    )
    if (events === 0 && !json) this.note(`Deployment ${args.id} has no events yet.`)
  }
}
