import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../cli/base-command.js'
import {apiKeyFlag, managerFlag, marketFlags} from '../cli/flags.js'
import {ExitCode, GpunetError} from '../lib/errors.js'
import {SETTINGS, type SettingKey} from '../lib/settings/catalog.js'
import {type ManifestCommand, sessionEnv, startMcp} from '../lib/mcp/index.js'

/** A cap's amount: a decimal number, zero or more. */
function amount(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const value = Number(text)
  if (!/^\d+(\.\d+)?$/.test(text.trim()) || !Number.isFinite(value)) {
    throw new GpunetError('usage', `--${name} takes an amount such as 10 or 2.5, not ${JSON.stringify(text)}`, {
      exitCode: ExitCode.USAGE,
    })
  }
  return value
}

export default class Mcp extends BaseCommand {
  static override summary = "Serve gpunet's commands as Model Context Protocol tools for AI agents (stdio, or --http)."
  static override description = `Every command is a tool (its flags and arguments the tool's, its --json document the result) unless it says why not: interactive, a server that never returns, or one that prints or takes a secret. The session names its network once (the localnet by default) with --network, --profile, --rpc, --manager, --wallet and --api-key, which no tool takes. A call that pays or destroys (post, run, extend, fund, start, stop, delete, ...) answers a quote first, bound to its exact arguments and price, and acts only when called again with the quote's id within 5 minutes; --max-spend and --max-credits cap what the session may spend. docs/mcp.md has the tools, the quote flow and how to wire an agent.`

  static override examples = [
    '<%= config.bin %> mcp   # the localnet, over stdio',
    '<%= config.bin %> mcp --network devnet --max-spend 5',
    '<%= config.bin %> mcp --http 8931   # http://127.0.0.1:8931/mcp',
  ]

  // The server itself answers on stdout (JSON-RPC): no --json document.
  static override enableJsonFlag = false

  static override flags = {
    network: marketFlags.network,
    profile: marketFlags.profile,
    rpc: marketFlags.rpc,
    manager: managerFlag,
    wallet: marketFlags.wallet,
    'api-key': apiKeyFlag,
    http: Flags.integer({
      description: 'serve Streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio (0 picks a free port)',
      helpValue: 'PORT',
      min: 0,
      max: 65535,
    }),
    'max-spend': Flags.string({
      description: 'most payment tokens the session may spend (SOL fees are counted on their own line)',
      helpValue: 'AMOUNT',
    }),
    'max-credits': Flags.string({description: 'most credits the session may spend', helpValue: 'AMOUNT'}),
  }

  static mcp = {exclude: 'the MCP server itself: it serves until its client leaves'}

  async run(): Promise<void> {
    const {flags} = await this.parse(Mcp)
    const {network} = this.settings
    // Every credential the session's settings hold (the API key, a pinning JWT, database URLs, ...), from whichever
    // layer: none of them may appear in a result.
    const secrets = (Object.entries(SETTINGS) as [SettingKey, {secret?: boolean}][])
      .filter(([, spec]) => spec.secret)
      .map(([key]) => this.settings.typed(key)?.value)
      .filter((value): value is string => typeof value === 'string')
    await startMcp({
      commands: this.config.commands as unknown as ManifestCommand[],
      network,
      env: sessionEnv(process.env, {
        network,
        profile: flags.profile,
        rpc: flags.rpc,
        manager: flags.manager,
        wallet: flags.wallet,
        apiKey: flags['api-key'],
      }),
      maxSpend: amount('max-spend', flags['max-spend']),
      maxCredits: amount('max-credits', flags['max-credits']),
      secrets,
      http: flags.http,
      allowedOrigins: this.settings.typed('allowOrigin')?.value,
      note: (line) => this.note(line),
    })
  }
}
