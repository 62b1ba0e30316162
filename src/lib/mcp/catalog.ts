/**
 * The MCP tools of `gpunet mcp`, made from the commands as oclif's manifest describes them (oclif.manifest.json):
 * names, arguments, descriptions and examples have one source, so a new command is a tool unless it says why not
 * (`static mcp = {exclude: 'reason'}` on its class, which the manifest keeps). A command that pays or destroys says
 * so too (`static paysOrDestroys = true`, or `{whenFlag: 'start'}` for one that pays only with that flag).
 */

/** A flag as the manifest keeps it. */
export interface ManifestFlag {
  name: string
  type: 'boolean' | 'option'
  description?: string
  summary?: string
  helpValue?: string | string[]
  multiple?: boolean
  options?: readonly string[]
  allowNo?: boolean
  required?: boolean
  hidden?: boolean
  default?: unknown
  /** The flags it may not be given with (`--quiet` with `--json`: then no tool may take it). */
  exclusive?: readonly string[]
}

/** An argument as the manifest keeps it. */
export interface ManifestArg {
  name: string
  description?: string
  required?: boolean
  options?: readonly string[]
}

/** What `gpunet mcp` reads of a command in the manifest (oclif keeps a class's own static members there too). */
export interface ManifestCommand {
  id: string
  summary?: string
  description?: string
  examples?: readonly (string | {command: string; description?: string})[]
  flags?: Record<string, ManifestFlag>
  args?: Record<string, ManifestArg>
  strict?: boolean
  hidden?: boolean
  jsonLines?: boolean
  /**
   * What the command says of its tool: `exclude`, why it is none; `words`, what the words after `--` are, for a
   * command that takes them (`job run -- CMD...`): the tool takes them as a list.
   */
  mcp?: {exclude?: string; words?: string}
  /** Whether a call pays or destroys, and so needs a quote first. */
  paysOrDestroys?: PaysOrDestroys
}

/**
 * What a command that pays or destroys does with money, kept on its class (`static paysOrDestroys = {...}`):
 * `wallet`, it pays from the session's wallet; `vault`, from a deployment's vault; `destroys`, it pays nothing but
 * stops, deletes or wipes something. `whenFlag`: only when that flag is given (`deployment create --start`).
 */
export interface PaysOrDestroys {
  what: 'wallet' | 'vault' | 'destroys'
  whenFlag?: string
}

/**
 * The session-wide flags: the session names them once (`gpunet mcp --network ...`), so no tool switches them.
 * `secrets-url` and `network-host` pick the services a session talks to as well, so they are the session's too.
 */
export const SESSION_FLAGS: ReadonlySet<string> = new Set([
  'network',
  'profile',
  'rpc',
  'manager',
  'wallet',
  'api-key',
  'secrets-url',
  'network-host',
])

/**
 * Flags no tool takes: `--json` is always given; `--yes` is what gpunet adds itself once a quote is redeemed (the
 * quote is the confirmation); `--follow` becomes `maxLines` / `maxSeconds`.
 */
const GPUNET_OWNED_FLAGS: ReadonlySet<string> = new Set(['json', 'yes', 'follow'])

/** The arguments gpunet adds to tools: the quote flow, the duplicate guard, bounded reads. */
export const QUOTE_ARGUMENT = 'quote'
export const ALLOW_DUPLICATE_ARGUMENT = 'allowDuplicate'
export const MAX_LINES_ARGUMENT = 'maxLines'
export const MAX_SECONDS_ARGUMENT = 'maxSeconds'
export const WORDS_ARGUMENT = 'command'
/** The bounds of a following read: defaults and most. */
export const FOLLOW_BOUNDS = {maxLines: {default: 1000, most: 10_000}, maxSeconds: {default: 30, most: 600}}

/** A JSON Schema of a tool's arguments (the subset gpunet writes). */
export interface ArgumentSchema {
  type: 'object'
  properties: Record<string, Record<string, unknown>>
  required?: string[]
  additionalProperties: false
}

/** A tool: its MCP face and what gpunet needs to run it. */
export interface Tool {
  name: string
  title: string
  description: string
  inputSchema: ArgumentSchema
  annotations: {readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean}
  /** The command it runs. */
  command: ManifestCommand
  /** The positional arguments in order; the last takes several values when the command is not strict. */
  args: ManifestArg[]
  flags: ManifestFlag[]
  follows: boolean
  quoted: PaysOrDestroys | null
  /** Whether the command posts a job definition (the duplicate guard). */
  posts: boolean
}

/** Why a command is not a tool. */
export interface Exclusion {
  command: string
  reason: string
}

/** The tool name of a command id: `job:post` is `job_post`, `deployment:api-key:list` is `deployment_api-key_list`. */
export function toolName(id: string): string {
  return id.replaceAll(':', '_')
}

/** The commands that post a definition, so the same one posted twice within 10 minutes is refused. */
const POSTING = new Set(['job:post', 'job:run'])

/** The tools of the manifest's commands, and every command left out with its reason. */
export function catalog(commands: readonly ManifestCommand[]): {tools: Tool[]; excluded: Exclusion[]} {
  const tools: Tool[] = []
  const excluded: Exclusion[] = []
  for (const command of [...commands].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    if (command.hidden) continue
    const reason = command.mcp?.exclude
    if (reason !== undefined) {
      excluded.push({command: command.id, reason})
      continue
    }
    tools.push(toolOf(command))
  }
  return {tools, excluded}
}

function toolOf(command: ManifestCommand): Tool {
  const flags = Object.values(command.flags ?? {}).filter(
    (flag) =>
      !flag.hidden &&
      !SESSION_FLAGS.has(flag.name) &&
      !GPUNET_OWNED_FLAGS.has(flag.name) &&
      !flag.exclusive?.includes('json'),
  )
  // `job post FILE` and `--file FILE` are one input: the tool takes it once, as the flag.
  const args = Object.values(command.args ?? {}).filter((arg) => !flags.some((flag) => flag.name === arg.name))
  const follows = Object.values(command.flags ?? {}).some((flag) => flag.name === 'follow')
  const quoted = command.paysOrDestroys ?? null
  const posts = POSTING.has(command.id)
  const properties: ArgumentSchema['properties'] = {}
  const required: string[] = []
  args.forEach((arg, index) => {
    const several = command.strict === false && index === args.length - 1
    const one: Record<string, unknown> = {type: 'string', description: arg.description ?? arg.name}
    if (arg.options) one.enum = [...arg.options]
    properties[arg.name] = several
      ? {
          description: `${arg.description ?? arg.name} (one, or several as a list)`,
          anyOf: [one, {type: 'array', items: one, minItems: 1}],
        }
      : one
    if (arg.required) required.push(arg.name)
  })
  for (const flag of flags) {
    const description = flag.summary ?? flag.description ?? flag.name
    if (flag.type === 'boolean') {
      properties[flag.name] = {type: 'boolean', description}
      continue
    }
    const one: Record<string, unknown> = {type: 'string', description}
    if (flag.options) one.enum = [...flag.options]
    properties[flag.name] = flag.multiple ? {type: 'array', items: one, description} : one
    if (flag.required) required.push(flag.name)
  }
  if (command.mcp?.words !== undefined) {
    properties[WORDS_ARGUMENT] = {
      type: 'array',
      items: {type: 'string'},
      description: `${command.mcp.words} (the words after --, each as it is)`,
    }
  }
  if (follows) {
    properties[MAX_LINES_ARGUMENT] = {
      type: 'integer',
      minimum: 1,
      maximum: FOLLOW_BOUNDS.maxLines.most,
      description: `follow (as --follow) until this many lines came (default ${FOLLOW_BOUNDS.maxLines.default} once following)`,
    }
    properties[MAX_SECONDS_ARGUMENT] = {
      type: 'integer',
      minimum: 1,
      maximum: FOLLOW_BOUNDS.maxSeconds.most,
      description: `follow (as --follow) for at most this many seconds (default ${FOLLOW_BOUNDS.maxSeconds.default} once following)`,
    }
  }
  if (quoted !== null) {
    properties[QUOTE_ARGUMENT] = {
      type: 'string',
      description:
        'the id of the quote an earlier call with the same arguments answered: only a call with it acts (within 5 minutes)',
    }
  }
  if (posts) {
    properties[ALLOW_DUPLICATE_ARGUMENT] = {
      type: 'boolean',
      description: 'post even when this session posted the same definition in the last 10 minutes',
    }
  }
  const inputSchema: ArgumentSchema = {type: 'object', properties, additionalProperties: false}
  if (required.length > 0) inputSchema.required = required
  return {
    name: toolName(command.id),
    title: `gpunet ${command.id.replaceAll(':', ' ')}`,
    description: describe(command, quoted),
    inputSchema,
    annotations: {
      readOnlyHint: quoted === null ? undefined : false,
      destructiveHint: quoted === null ? undefined : true,
      openWorldHint: true,
    },
    command,
    args,
    flags,
    follows,
    quoted,
    posts,
  }
}

/** The tool's description: the command's summary and description, its examples, and the quote rule if any. */
function describe(command: ManifestCommand, quoted: Tool['quoted']): string {
  const parts = [command.summary, command.description].filter((part): part is string => Boolean(part))
  const examples = (command.examples ?? [])
    .map((example) => (typeof example === 'string' ? example : example.command))
    .map((example) => example.replaceAll('<%= config.bin %>', 'gpunet'))
  if (examples.length > 0) parts.push(`Examples (as the CLI):\n${examples.join('\n')}`)
  if (quoted !== null) {
    const does = quoted.what === 'destroys' ? 'destroys' : 'pays'
    const when = quoted.whenFlag ? `With --${quoted.whenFlag} it ${does}` : `It ${does}`
    parts.push(
      `${when}: the first call answers a quote (what it does, what it costs, from which wallet or vault); call again with the same arguments and "quote": its id, within 5 minutes, to act.`,
    )
  }
  parts.push('The result is the JSON document the command prints with --json.')
  return parts.join('\n\n')
}

/** Whether a call of the tool with these arguments needs a quote. */
export function needsQuote(tool: Tool, args: Record<string, unknown>): boolean {
  if (tool.quoted === null) return false
  if (tool.quoted.whenFlag === undefined) return true
  const value = args[tool.quoted.whenFlag]
  return value !== undefined && value !== false
}
