/**
 * A tool call's arguments checked against its tool and turned into the command's words. Anything the schema does
 * not allow is a bad argument (JSON-RPC -32602), never a command run: an unknown member, a wrong type, a value
 * outside a flag's choices, a positional value that would read as a flag (`--network=mainnet` would switch the
 * session's network) or as standard input (`-`: a tool has none).
 */
import {
  ALLOW_DUPLICATE_ARGUMENT,
  FOLLOW_BOUNDS,
  MAX_LINES_ARGUMENT,
  MAX_SECONDS_ARGUMENT,
  QUOTE_ARGUMENT,
  type Tool,
  WORDS_ARGUMENT,
} from './catalog.js'

/** The most a call's arguments may weigh, as JSON text. */
export const MAX_INPUT_BYTES = 1024 * 1024

/** A call's arguments refused before anything runs: the server answers JSON-RPC -32602 with its message. */
export class BadArguments extends Error {}

/** What a checked call runs: the command's words, and what gpunet itself took from the arguments. */
export interface PreparedCall {
  /** The words after `gpunet`: the command's id, its flags, its positional values (never `--json`). */
  words: string[]
  /** `--` and the words after it, for a command that takes them (`job run -- CMD...`); else empty. */
  tail: string[]
  /** The arguments the command sees (the quote flow's own members left out): a quote is bound to them. */
  commandArgs: Record<string, unknown>
  quote: string | undefined
  allowDuplicate: boolean
  /** Set when the call follows (`maxLines` or `maxSeconds` given). */
  follow: {maxLines: number; maxSeconds: number} | null
}

/** Checks a call's arguments against its tool and makes the command's words. */
export function prepareCall(tool: Tool, input: unknown): PreparedCall {
  const args = input ?? {}
  if (typeof args !== 'object' || Array.isArray(args)) throw new BadArguments('the arguments are not an object')
  const size = Buffer.byteLength(JSON.stringify(args), 'utf8')
  if (size > MAX_INPUT_BYTES) {
    throw new BadArguments(`the arguments weigh ${size} bytes, over the ${MAX_INPUT_BYTES} (1 MiB) a call may carry`)
  }
  const given = args as Record<string, unknown>
  const known = new Set(Object.keys(tool.inputSchema.properties))
  for (const name of Object.keys(given)) {
    if (!known.has(name)) throw new BadArguments(`${tool.name} takes no argument "${name.slice(0, 80)}"`)
  }
  for (const name of tool.inputSchema.required ?? []) {
    if (given[name] === undefined) throw new BadArguments(`${tool.name} needs the argument "${name}"`)
  }

  const words = tool.command.id.split(':')
  const commandArgs: Record<string, unknown> = {}
  for (const flag of tool.flags) {
    const value = given[flag.name]
    if (value === undefined) continue
    commandArgs[flag.name] = value
    if (flag.type === 'boolean') {
      if (typeof value !== 'boolean') throw new BadArguments(`"${flag.name}" is true or false`)
      if (value) words.push(`--${flag.name}`)
      else if (flag.allowNo) words.push(`--no-${flag.name}`)
      continue
    }
    const values = flag.multiple ? value : [value]
    if (!Array.isArray(values)) throw new BadArguments(`"${flag.name}" is a list of strings`)
    for (const one of values) {
      if (typeof one !== 'string') throw new BadArguments(`"${flag.name}" is a string`)
      if (flag.options && !flag.options.includes(one)) {
        throw new BadArguments(`"${flag.name}" is one of ${flag.options.join(', ')}`)
      }
      words.push(`--${flag.name}=${one}`)
    }
  }
  const positional: string[] = []
  tool.args.forEach((arg, index) => {
    const value = given[arg.name]
    if (value === undefined) return
    commandArgs[arg.name] = value
    const several = tool.command.strict === false && index === tool.args.length - 1
    const values = several && Array.isArray(value) ? value : [value]
    if (values.length === 0) throw new BadArguments(`"${arg.name}" needs at least one value`)
    for (const one of values) {
      if (typeof one !== 'string')
        throw new BadArguments(`"${arg.name}" is a string${several ? ' or a list of strings' : ''}`)
      if (one.startsWith('-')) {
        throw new BadArguments(
          `"${arg.name}" may not start with "-" (a flag, or standard input, which a tool has none of)`,
        )
      }
      if (arg.options && !arg.options.includes(one)) {
        throw new BadArguments(`"${arg.name}" is one of ${arg.options.join(', ')}`)
      }
      positional.push(one)
    }
  })
  // An argument after one left out would take its place: give them in order.
  const missing = tool.args.findIndex((arg) => given[arg.name] === undefined)
  if (missing !== -1 && tool.args.slice(missing).some((arg) => given[arg.name] !== undefined)) {
    throw new BadArguments(`"${tool.args[missing]!.name}" is needed before the arguments after it`)
  }
  words.push(...positional)
  let tail: string[] = []
  const after = given[WORDS_ARGUMENT]
  if (tool.command.mcp?.words !== undefined && after !== undefined) {
    if (!Array.isArray(after) || after.some((word) => typeof word !== 'string')) {
      throw new BadArguments(`"${WORDS_ARGUMENT}" is a list of strings`)
    }
    commandArgs[WORDS_ARGUMENT] = after
    tail = ['--', ...(after as string[])]
  }

  const quote = given[QUOTE_ARGUMENT]
  if (quote !== undefined && typeof quote !== 'string') throw new BadArguments('"quote" is a quote id (a string)')
  const allowDuplicate = given[ALLOW_DUPLICATE_ARGUMENT]
  if (allowDuplicate !== undefined && typeof allowDuplicate !== 'boolean') {
    throw new BadArguments('"allowDuplicate" is true or false')
  }
  const maxLines = bound(given, MAX_LINES_ARGUMENT, FOLLOW_BOUNDS.maxLines.most)
  const maxSeconds = bound(given, MAX_SECONDS_ARGUMENT, FOLLOW_BOUNDS.maxSeconds.most)
  const follow =
    tool.follows && (maxLines !== undefined || maxSeconds !== undefined)
      ? {
          maxLines: maxLines ?? FOLLOW_BOUNDS.maxLines.default,
          maxSeconds: maxSeconds ?? FOLLOW_BOUNDS.maxSeconds.default,
        }
      : null
  if (follow) {
    words.push('--follow')
    commandArgs[MAX_LINES_ARGUMENT] = follow.maxLines
    commandArgs[MAX_SECONDS_ARGUMENT] = follow.maxSeconds
  }
  return {words, tail, commandArgs, quote, allowDuplicate: allowDuplicate === true, follow}
}

function bound(given: Record<string, unknown>, name: string, most: number): number | undefined {
  const value = given[name]
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > most) {
    throw new BadArguments(`"${name}" is a whole number from 1 to ${most}`)
  }
  return value
}
