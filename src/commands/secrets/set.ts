import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {networkFlags} from '../../cli/flags.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {askHidden, canPrompt} from '../../lib/terminal/prompt.js'
import {connectSecrets} from '../../lib/network-connection.js'
import {readEnvFile, readValue, type ValueSource} from '../../lib/secrets/input.js'
import {readStdin} from '../../lib/terminal/stdin.js'

export default class SecretsSet extends BaseCommand {
  static override summary = 'Store a secret (or many from an env file) in the secrets service.'
  static override description = `The value is read from standard input (one trailing newline dropped), from a file given as @FILE (taken byte for byte), or from --value (which lands in your shell history: avoid it for real secrets). At a terminal, without any of these, the value is asked for without echo. A name that exists is replaced. Jobs refer to a secret as %%secrets.NAME%% in any string of their definition.`

  static override examples = [
    'printf %s "$HF_TOKEN" | <%= config.bin %> secrets set HF_TOKEN',
    '<%= config.bin %> secrets set TLS_KEY @server.key',
    '<%= config.bin %> secrets set --from-env-file .env.production',
    '<%= config.bin %> secrets set DB_PASSWORD --network devnet --secrets-url https://secrets.example.org',
  ]

  static override args = {
    name: Args.string({description: 'secret name: letters, digits, "_", "." and "-", starting with a letter or "_"'}),
    source: Args.string({description: '@FILE to read the value from'}),
  }

  static override flags = {
    ...networkFlags,
    value: Flags.string({
      description: 'the value as text (visible in shell history and process lists)',
      helpValue: 'TEXT',
    }),
    'from-env-file': Flags.string({
      description: 'store every NAME=value line of a dotenv file ("-" reads standard input)',
      helpValue: 'FILE',
    }),
  }

  static mcp = {exclude: "takes a secret's value (from standard input, which a tool has none of)"}

  async run(): Promise<{network: string; url: string; secrets: {name: string}[]; names: string[]}> {
    const {args, flags} = await this.parse(SecretsSet)
    const secrets = await this.collect(args.name, args.source, flags.value, flags['from-env-file'])
    const client = await connectSecrets(this.settings, {
      allowUnboundLogin: flags['allow-unbound-login'],
      note: (line) => this.note(line),
    })
    await client.set(secrets)
    const names = Object.keys(secrets).sort()
    this.say(`${this.color('green', '✔')} Stored ${names.join(', ')} on ${this.settings.network} (${client.url})`)
    // `names` is deprecated (0.2): `secrets[].name`, the one shape of the secrets commands, kept for one minor version.
    return {network: this.settings.network, url: client.url, secrets: names.map((name) => ({name})), names}
  }

  private async collect(
    name?: string,
    source?: string,
    value?: string,
    envFile?: string,
  ): Promise<Record<string, string>> {
    if (envFile) {
      if (name || value !== undefined) usage('--from-env-file takes its names from the file; drop NAME and --value')
      return readEnvFile(envFile)
    }
    if (!name) usage('name the secret to set, or pass --from-env-file FILE')
    if (source !== undefined && !source.startsWith('@')) {
      usage(
        'the value is not taken as an argument, so it stays out of shell history',
        'pipe it on standard input, read it from @FILE, or (if you accept the risk) pass --value TEXT',
      )
    }
    if (source !== undefined && value !== undefined) usage('give the value either as @FILE or with --value, not both')
    if (value !== undefined)
      this.note(
        this.color('yellow', 'Warning: --value puts the secret in your shell history; prefer standard input or @FILE.'),
      )
    return {[name]: await readValue(name, this.source(name, source, value))}
  }

  private source(name: string, source?: string, value?: string): ValueSource {
    if (value !== undefined) return {kind: 'text', text: value}
    if (source !== undefined) return {kind: 'file', path: source.slice(1)}
    return {kind: 'stdin', read: canPrompt() ? () => askHidden(`Value for ${name}: `) : readStdin}
  }
}

function usage(message: string, hint = 'run `gpunet secrets set --help` for the ways to give a value'): never {
  throw new GpunetError('usage', message, {exitCode: ExitCode.USAGE, hint})
}
