import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {networkFlags} from '../../cli/flags.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {connectSecrets} from '../../lib/network-connection.js'

const MASK = '••••••••'

/** One shape for every secrets command: the network, the service, and the secrets named (docs/json.md). */
interface GetResult {
  network: string
  url: string
  secrets: Array<{name: string; value?: string}>
  /** With NAME: deprecated (0.2) `secrets[0].name` and `.value`, kept for one minor version. */
  name?: string
  value?: string
}

export default class SecretsGet extends BaseCommand {
  static override summary = 'Print one secret, or list the names of your secrets.'
  static override description = `With NAME, prints the value alone (no trailing newline when piped, so it can be captured as is). Without NAME, lists every name with its value masked, unless --show-values.`

  static override examples = [
    '<%= config.bin %> secrets get',
    '<%= config.bin %> secrets get HF_TOKEN',
    'export HF_TOKEN="$(<%= config.bin %> secrets get HF_TOKEN)"',
    '<%= config.bin %> secrets get --show-values --json | jq .secrets',
  ]

  static override args = {
    name: Args.string({description: 'the secret to print'}),
  }

  static override flags = {
    ...networkFlags,
    'show-values': Flags.boolean({description: 'print values in the list instead of masking them', default: false}),
  }

  static mcp = {exclude: "prints a secret's value"}

  async run(): Promise<GetResult> {
    const {args, flags} = await this.parse(SecretsGet)
    const client = await connectSecrets(this.settings, {
      allowUnboundLogin: flags['allow-unbound-login'],
      note: (line) => this.note(line),
    })
    const secrets = await client.list()
    if (args.name !== undefined) {
      if (!Object.hasOwn(secrets, args.name)) {
        throw new GpunetError('not_found', `no secret named ${args.name} on ${this.settings.network}`, {
          exitCode: ExitCode.NOT_FOUND,
          hint: `list your secrets with: ${this.config.bin} secrets get`,
        })
      }
      const value = secrets[args.name] as string
      if (!this.jsonEnabled()) process.stdout.write(process.stdout.isTTY ? `${value}\n` : value)
      return {
        network: this.settings.network,
        url: client.url,
        secrets: [{name: args.name, value}],
        name: args.name,
        value,
      }
    }

    const names = Object.keys(secrets).sort()
    if (names.length === 0)
      this.note(
        `No secrets on ${this.settings.network} (${client.url}). Add one with: ${this.config.bin} secrets set NAME`,
      )
    const width = Math.max(0, ...names.map((n) => n.length))
    for (const name of names)
      this.say(`${name.padEnd(width)}  ${flags['show-values'] ? secrets[name] : this.color('dim', MASK)}`)
    return {
      network: this.settings.network,
      url: client.url,
      secrets: names.map((name) => (flags['show-values'] ? {name, value: secrets[name] as string} : {name})),
    }
  }
}
