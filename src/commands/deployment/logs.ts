import * as Flags from '@oclif/core/flags'

import {writeLine} from '../../cli/base-command.js'
import {deploymentArg, DeploymentCommand} from '../../cli/deployment-command.js'
import {deploymentFlags, marketFlags} from '../../cli/flags.js'
import {deploymentLogs} from '../../lib/job/replica-logs.js'
import {interruptible} from '../../lib/job/stop-signals.js'
import {connectMarket} from '../../lib/network-connection.js'
import {printable} from '../../lib/text/terminal-text.js'

export default class DeploymentLogs extends DeploymentCommand {
  static override summary = 'Print the output of every replica of a deployment, each line prefixed with its job.'

  static override description = `The lines of each running replica come from its node's API, as \`job logs\` reads them. The deployment's vault posted its jobs, so only the vault's signature opens their nodes: the manager signs each request's header for you (its /header route). --follow prints lines as they come, takes in the replicas the manager lists later, and ends once the deployment is stopped and its jobs ended (Ctrl+C ends it earlier; the deployment goes on). Container output goes to stdout, what nodes and gpunet say to stderr.

--json prints one JSON object per line: {"job", "op", "stream", "time", "line"}.`

  static override examples = [
    '<%= config.bin %> deployment logs 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --follow',
    '<%= config.bin %> deployment logs 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --json | jq -r .line',
  ]

  static override args = deploymentArg
  static override flags = {
    follow: Flags.boolean({
      char: 'f',
      description: 'print lines as they come, new replicas included, until it is stopped',
    }),
    rpc: marketFlags.rpc,
    'network-host': marketFlags['network-host'],
    ...deploymentFlags,
  }

  /** Under --json the output is JSON lines: the error document is the last line, on one line. */
  static override jsonLines = true

  async run(): Promise<void> {
    const {args, flags} = await this.parse(DeploymentLogs)
    const json = this.jsonEnabled()
    const note = (line: string) => this.note(printable(line, process.stderr))
    const connection = await this.manager()
    const net = await connectMarket(this.settings, note)
    await interruptible((signal) =>
      deploymentLogs(connection.client, net, args.id, {
        follow: flags.follow,
        signal,
        notice: note,
        line: (job, entry) =>
          writeLine(json ? JSON.stringify({job, ...entry}) : printable(`[${job}] ${entry.line}`, process.stdout)),
      }),
    )
  }
}
