import {BaseCommand} from '../../cli/base-command.js'
import {runningLocalnetJobs, stopLocalnet} from '../../lib/localnet/server/control.js'
import {dataDirFlag} from '../../cli/localnet-flags.js'

export default class LocalnetStop extends BaseCommand {
  static override summary = 'Stop the localnet; its chain and content stay in the data directory for the next start.'
  static override description = `Does nothing (and exits 0) when no localnet runs for the data directory.

The jobs its nodes run are ended with it, and it says so first, on stderr, naming them (endedJobs under --json): a localnet cannot resume a job, so at its next start their node records each failed (\`interrupted\`) and the poster gets the unused time back. Stop them yourself first (\`gpunet job stop JOB\`) to end them as stopped instead.

--json prints {stopped, pid, dataDir, endedJobs}.`

  static override examples = [
    '<%= config.bin %> localnet stop',
    '<%= config.bin %> localnet stop --data-dir /tmp/gpunet-localnet',
    "<%= config.bin %> localnet stop --json | jq -r '.endedJobs[]'",
  ]

  static override settingsNetwork = 'localnet' as const

  static override flags = {'data-dir': dataDirFlag}

  static paysOrDestroys = {what: 'destroys'} as const

  async run(): Promise<{stopped: boolean; pid: number | null; dataDir: string; endedJobs: string[]}> {
    await this.parse(LocalnetStop)
    const {dataDir} = this.settings.localnet
    // Said before the stop: a stop past its deadline is a kill, after which nothing says what ran.
    const endedJobs = runningLocalnetJobs(dataDir)
    if (endedJobs.length > 0) {
      const jobs = endedJobs.length === 1 ? '1 running job' : `${endedJobs.length} running jobs`
      this.note(
        `Ending ${jobs} with the localnet (${endedJobs.join(', ')}): at its next start each is recorded failed (interrupted), its unused time refunded.`,
      )
    }
    const pid = await stopLocalnet(dataDir)
    this.say(
      pid === null
        ? `No localnet is running for ${dataDir}.`
        : `Stopped the localnet (pid ${pid}); its state is kept in ${dataDir}.`,
    )
    return {stopped: pid !== null, pid, dataDir, endedJobs: pid === null ? [] : endedJobs}
  }
}
