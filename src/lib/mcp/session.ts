/**
 * One `gpunet mcp` session: its tools (from the manifest), its network and settings (named once at start), its
 * quotes and caps. A call runs its command as `gpunet ... --json` and answers that document; a call that pays or
 * destroys answers a quote first, and acts only when called again with it.
 */
import {createHash} from 'node:crypto'
import {readFileSync, statSync} from 'node:fs'

import {BadArguments, MAX_INPUT_BYTES, prepareCall, type PreparedCall} from './arguments.js'
import {catalog, type Exclusion, type ManifestCommand, needsQuote, type Tool} from './catalog.js'
import {bindingOf, type Cost, isRefusal, QuoteBook, refusal, type Refusal} from './quotes.js'
import {type CommandOutput, runCommand, type RunOptions} from './run-command.js'

/** What a tool call answers: the document (structuredContent, and the same as text) and whether it failed. */
export interface ToolAnswer {
  document: Record<string, unknown>
  isError: boolean
}

/** An unknown tool: JSON-RPC -32602, as bad arguments. */
export class UnknownTool extends BadArguments {}

export interface SessionOptions {
  commands: readonly ManifestCommand[]
  network: string
  /** The environment every command runs with: the session's settings as GPUNET_* variables. */
  env: NodeJS.ProcessEnv
  maxSpend?: number
  maxCredits?: number
  /** Values that must never appear in a result (the session's API key): replaced by `[redacted]`. */
  secrets?: readonly string[]
  run?: (options: RunOptions) => Promise<CommandOutput>
  now?: () => number
}

/**
 * The exit codes of a paying command that refused before it sent anything: usage (2), an invalid definition or input
 * (3), a wallet that cannot pay (4), a refused login (6), a job or deployment not found (7). Any other end (success,
 * a --wait that saw the job fail, a service failing midway) may have paid, and stays counted.
 */
const NOTHING_SENT: ReadonlySet<number> = new Set([2, 3, 4, 6, 7])

/** The words a dry run leaves out: it stops before anything is posted, so there is nothing to wait for. */
const NOT_IN_DRY_RUN = /^--(wait|wait-for|wait-timeout|logs|quiet|no-logs)(=|$)/

export class McpSession {
  readonly tools: Tool[]
  readonly excluded: Exclusion[]
  readonly book: QuoteBook
  private readonly byName: Map<string, Tool>
  private readonly run: (options: RunOptions) => Promise<CommandOutput>
  private walletAddress: string | undefined

  constructor(private readonly options: SessionOptions) {
    const {tools, excluded} = catalog(options.commands)
    this.tools = tools
    this.excluded = excluded
    this.byName = new Map(tools.map((tool) => [tool.name, tool]))
    this.book = new QuoteBook({maxSpend: options.maxSpend, maxCredits: options.maxCredits, now: options.now})
    this.run = options.run ?? runCommand
  }

  get network(): string {
    return this.options.network
  }

  tool(name: string): Tool {
    const tool = this.byName.get(name)
    if (!tool) throw new UnknownTool(`no tool named ${JSON.stringify(name.slice(0, 100))}`)
    return tool
  }

  /** Answers a tool call; bad arguments and unknown tools throw BadArguments. */
  async call(name: string, args: unknown, signal?: AbortSignal): Promise<ToolAnswer> {
    const tool = this.tool(name)
    const call = prepareCall(tool, args)
    if (!needsQuote(tool, call.commandArgs)) return this.answer(await this.exec(tool, call.words, call, signal))

    const definition = tool.posts ? definitionHash(call) : null
    const priced = await this.price(tool, call, signal)
    if ('failure' in priced) return priced.failure
    // From here to the command's start nothing waits: two calls at once cannot both pass a cap or the duplicate
    // guard that only one of them fits.
    if (definition && !call.allowDuplicate) {
      const duplicate = this.book.duplicate(definition)
      if (duplicate) return refused(duplicate)
    }
    const binding = bindingOf(tool.name, call.commandArgs, {definition, cost: priced.cost})
    const over = this.book.overCap(priced.cost)
    if (over) return refused(over)
    if (call.quote === undefined) {
      const quote = this.book.issue(
        {
          tool: tool.name,
          action: `gpunet ${[...call.words, ...call.tail].map(shellWord).join(' ')} (network ${this.options.network})`,
          network: this.options.network,
          cost: priced.cost,
          from: priced.from,
        },
        binding,
      )
      return {
        document: {
          quote,
          spent: {...this.book.spent},
          hint: `call ${tool.name} again with the same arguments and "quote": "${quote.id}" to act`,
        },
        isError: false,
      }
    }
    const redeemed = this.book.redeem(call.quote, tool.name, binding)
    if (isRefusal(redeemed)) return refused(redeemed)
    // Counted before it runs, and given back only when its exit code says nothing was sent.
    this.book.charge(priced.cost)
    const postedBefore = definition ? this.book.recordPost(definition) : undefined
    // The quote is the confirmation a terminal would be asked for (devnet, mainnet).
    const declaresYes = Object.values(tool.command.flags ?? {}).some((flag) => flag.name === 'yes')
    const output = await this.exec(tool, declaresYes ? [...call.words, '--yes'] : call.words, call, signal)
    if (NOTHING_SENT.has(output.exitCode)) {
      this.book.refund(priced.cost)
      if (definition) this.book.forgetPost(definition, postedBefore)
    }
    return this.answer(output)
  }

  private exec(tool: Tool, words: string[], call: PreparedCall, signal?: AbortSignal): Promise<CommandOutput> {
    return this.run({
      words,
      tail: call.tail,
      env: this.options.env,
      jsonLines: tool.command.jsonLines === true,
      follow: call.follow,
      signal,
    })
  }

  /** What a quoted call costs and who pays, or the failure of the dry run that prices it. */
  private async price(
    tool: Tool,
    call: PreparedCall,
    signal?: AbortSignal,
  ): Promise<{cost: Cost; from: string} | {failure: ToolAnswer}> {
    const what = tool.quoted!.what
    const args = call.commandArgs
    if (what === 'destroys') return {cost: {tokens: 0, sol: 0, credits: 0}, from: 'nothing is paid'}
    if (what === 'vault') {
      const id = tool.args.map((arg) => args[arg.name]).find((value) => typeof value === 'string')
      return {
        cost: {tokens: 0, sol: 0, credits: 0},
        from: `the vault of ${id ? `deployment ${id as string}` : 'the deployment'} (it holds only what deployment fund sent it): nothing from the wallet`,
      }
    }
    if (args.credits === true) {
      return {cost: {tokens: 0, sol: 0, credits: null}, from: "credits of the network's API (the session's API key)"}
    }
    const declares = (name: string) => tool.flags.some((flag) => flag.name === name)
    if (declares('dry-run')) {
      const words = call.words.filter((word) => !NOT_IN_DRY_RUN.test(word))
      const output = await this.exec(tool, [...words, '--dry-run'], {...call, follow: null}, signal)
      if (output.exitCode !== 0) return {failure: this.answer(output)}
      // `job post`, `job run` and `job extend --dry-run`: the tokens (deposit or difference), the SOL (fee, rent).
      const report = output.document as {
        totalPrice: {amount: number}
        fee: {amount: number}
        rent?: {amount: number}
        wallet: {address: string}
      }
      return {
        cost: {
          tokens: report.totalPrice.amount,
          sol: round(report.fee.amount + (report.rent?.amount ?? 0)),
          credits: 0,
        },
        from: `wallet ${report.wallet.address}`,
      }
    }
    const from = `wallet ${await this.wallet(signal)}`
    if (declares('tokens') || declares('sol')) {
      const amount = (value: unknown) => (value === undefined ? 0 : Number(value))
      const tokens = amount(args.tokens)
      const sol = amount(args.sol)
      return {
        cost: {tokens: Number.isFinite(tokens) ? tokens : null, sol: Number.isFinite(sol) ? sol : null, credits: 0},
        from,
      }
    }
    return {cost: {tokens: null, sol: null, credits: 0}, from}
  }

  /** The session wallet's address (`gpunet wallet address --json`), read once. */
  private async wallet(signal?: AbortSignal): Promise<string> {
    if (this.walletAddress) return this.walletAddress
    const output = await this.run({words: ['wallet', 'address'], env: this.options.env, jsonLines: false, signal})
    const address = (output.document as {address?: unknown}).address
    if (typeof address === 'string') this.walletAddress = address
    return this.walletAddress ?? "the session's wallet"
  }

  /** A command's output as a tool's answer, with any secret value the session knows taken out. */
  private answer(output: CommandOutput): ToolAnswer {
    const document =
      output.document && typeof output.document === 'object' && !Array.isArray(output.document)
        ? (output.document as Record<string, unknown>)
        : {value: output.document}
    return {document: redact(document, this.options.secrets ?? []), isError: output.exitCode !== 0}
  }
}

function refused(why: Refusal): ToolAnswer {
  return {document: why as unknown as Record<string, unknown>, isError: true}
}

/** A word as a shell would need it written (the quote's action reads as the CLI line it runs). */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`
}

function round(value: number): number {
  return Math.round(value * 1e9) / 1e9
}

/** Replaces every occurrence of a secret value in the document's strings. */
export function redact<T>(document: T, secrets: readonly string[]): T {
  const values = secrets.filter((secret) => secret.length >= 4)
  if (values.length === 0) return document
  const text = JSON.stringify(document)
  if (!values.some((secret) => text.includes(JSON.stringify(secret).slice(1, -1)))) return document
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return values.reduce((out, secret) => out.split(secret).join('[redacted]'), value)
    if (Array.isArray(value)) return value.map(walk)
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, walk(member)]))
    }
    return value
  }
  return walk(document) as T
}

/**
 * What makes a post "the same definition": the file's bytes for `job post` (a file over 1 MiB is refused), the
 * call's arguments for `job run` (its definition is made from them).
 */
function definitionHash(call: PreparedCall): string {
  const file = call.commandArgs.file
  if (typeof file === 'string') {
    let bytes: Buffer
    try {
      if (statSync(file).size > MAX_INPUT_BYTES) throw new BadArguments(`${file} is over 1 MiB`)
      bytes = readFileSync(file)
    } catch (error) {
      if (error instanceof BadArguments) throw error
      return createHash('sha256').update(`unreadable:${file}`).digest('hex') // the command itself says why
    }
    return createHash('sha256').update(bytes).digest('hex')
  }
  const definitionArgs = Object.fromEntries(Object.entries(call.commandArgs).filter(([name]) => name !== 'timeout'))
  return bindingOf('definition', definitionArgs)
}

export {refusal}
