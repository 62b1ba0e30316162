import * as Flags from '@oclif/core/flags'

import {deploymentArg, DeploymentCommand} from '../../cli/deployment-command.js'
import {deploymentFlags} from '../../cli/flags.js'
import type {DeploymentJob} from '../../lib/deployments/client/client.js'
import {jobRows} from '../../lib/deployments/client/client-render.js'
import {printable} from '../../lib/text/terminal-text.js'

export default class DeploymentJobs extends DeploymentCommand {
  static override summary = "List a deployment's jobs: each replica it listed, newest first."

  static override description = `Each job is a job of the chain: \`gpunet job get JOB\` shows it. --json prints the manager's job rows with their own member names (job, tx, state, revision, time_start, created_at...).`

  static override examples = [
    '<%= config.bin %> deployment jobs 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU',
    "<%= config.bin %> deployment jobs 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --state RUNNING --json | jq -r '.jobs[].job'",
  ]

  static override args = deploymentArg
  static override flags = {
    state: Flags.string({
      description: 'only jobs in these states (comma-separated: QUEUED,RUNNING)',
      helpValue: 'STATE',
    }),
    limit: Flags.integer({description: 'jobs per page', options: ['10', '20', '50', '100'], default: 100}),
    cursor: Flags.string({
      description: 'the page after this cursor (pagination.cursor_next of --json)',
      helpValue: 'CURSOR',
    }),
    ...deploymentFlags,
  }

  async run(): Promise<{deployment: string; jobs: DeploymentJob[]; pagination: {cursor_next: string | null}}> {
    const {args, flags} = await this.parse(DeploymentJobs)
    const connection = await this.manager()
    const wanted = flags.state?.split(',').map((state) => state.trim().toUpperCase())
    const page = await connection.client.jobs(args.id, {
      limit: flags.limit as 10 | 20 | 50 | 100,
      cursor: flags.cursor,
      sort_order: 'desc',
      state: wanted?.join(','),
    })
    // Filtered here too: a manager that does not take the filter answers every job.
    const jobs = wanted ? page.jobs.filter((job) => wanted.includes(String(job.state))) : page.jobs
    if (jobs.length === 0) this.say(`Deployment ${args.id} has no ${wanted ? `${wanted.join(' or ')} ` : ''}jobs.`)
    for (const line of jobRows(jobs)) this.say(printable(line, process.stdout))
    return {deployment: args.id, jobs, pagination: page.pagination}
  }
}
