import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {validateFiles, type ValidateFilesDocument} from '../../lib/definition/validate-files.js'
import {NETWORKS, type Network} from '../../lib/network.js'
import {readStdinBytes} from '../../lib/terminal/stdin.js'

export default class JobValidate extends BaseCommand {
  static override summary = 'Check job definition files (JSON or YAML) against the job definition spec.'
  static override description =
    "Reports every problem of every file, each with its line and column, the member's path and a stable code, and warns about credentials written inline. Use \"-\" to read standard input. Exits 0 when every file is valid, 3 when any file is invalid or unreadable (with --strict, also when it has warnings).\n\nWith --network, also tells whether that network's nodes would accept the job as `job post` would upload it there: in the network's form (docs/networks.md), checked by the network's own validator (@nosana/types) and, on localnet, by what its node can run. A definition in the network's newer format is then accepted with a warning for each member beyond spec 0.1. Without --network, the spec alone decides."

  static override examples = [
    '<%= config.bin %> job validate job.json',
    '<%= config.bin %> job validate jobs/*.json jobs/*.yaml',
    'cat job.yaml | <%= config.bin %> job validate -',
    '<%= config.bin %> job validate job.json --json | jq ".files[].errors[].message"',
    '<%= config.bin %> job validate --strict jobs/*.json   # in CI: warnings fail too',
    "<%= config.bin %> job validate --network mainnet job.json   # would mainnet's nodes run it?",
  ]

  static override strict = false
  // The spec alone decides unless --network is given: no profile's or default network stands in for it.
  static override settlesProfile = false
  static override args = {
    file: Args.string({description: 'job definition files; "-" reads standard input', required: true}),
  }

  static override flags = {
    strict: Flags.boolean({description: 'treat warnings as errors: a file with warnings is invalid', default: false}),
    network: Flags.option({
      options: NETWORKS,
      description: "also check the job as it would be uploaded there, by that network's own validator",
      helpValue: 'NETWORK',
    })(),
    frames: Flags.boolean({
      description: 'show the offending lines of the file under each error',
      default: true,
      allowNo: true,
    }),
  }

  async run(): Promise<ValidateFilesDocument> {
    const {argv, flags} = await this.parse(JobValidate)
    const {document, exitCode} = await validateFiles(argv as string[], {
      ...flags,
      network: flags.network as Network | undefined,
      say: this.jsonEnabled() ? undefined : (line) => this.say(line),
      paint: (style, text) => this.color(style, text),
      readStdin: readStdinBytes,
    })
    this.setExitCode(exitCode)
    return document
  }
}
