// The invocations gpunet answers before oclif loads. Loading and starting oclif is most of what a short command
// costs (more than all of Node's own start on Node 24, see bench/cold-start.bench.ts), and three commands are often
// run in loops by scripts: `gpunet --version`, `gpunet job validate FILE...` and `gpunet job exec JOB -- CMD...`
// (whose target is its distance to `podman exec`: bench/exec.bench.ts). Only their plain forms are served here,
// where the result cannot differ from oclif's: anything else (help, a flag this path does not know, a repeated
// flag, `--` where it does not belong, no file) goes to oclif, which parses, explains and errs as for every other
// command. Past the parsing, each runs the very library code its oclif command runs.

import module from 'node:module'

import type {PlainExec} from './fast-exec.js'
import type {Paint} from '../lib/definition/report-text.js'
import {installedPackage, packageRoot} from '../lib/package-root.js'

/** The flags of `gpunet job validate` (all boolean) that the plain form may carry. */
const VALIDATE_FLAGS = new Set(['--json', '--strict', '--frames', '--no-frames'])

interface PlainValidate {
  files: string[]
  json: boolean
  strict: boolean
  frames: boolean
}

/** The flags of `gpunet job exec` (all taking a value) that the plain form may carry, each once. */
const EXEC_FLAGS = new Set(['--op', '--network', '--profile', '--rpc', '--network-host', '--wallet'])

/** Serves argv when it is a plain `--version`, `job validate` or `job exec`; false means "hand it to oclif". */
export async function serveWithoutOclif(argv: string[]): Promise<boolean> {
  if (argv.includes('--version') && argv.every((arg) => arg === '--version' || arg === '--json')) {
    printVersion(argv.includes('--json'))
    return true
  }
  const validate = plainValidate(argv)
  if (validate) {
    await runValidate(validate)
    return true
  }
  const exec = plainExec(argv)
  return exec ? runExec(exec) : false
}

/** `gpunet --version`, and with `--json` one document. */
function printVersion(json: boolean): void {
  const {name, version} = installedPackage().manifest
  if (json) {
    const document = {name, version, node: process.version, platform: process.platform, arch: process.arch}
    process.stdout.write(`${JSON.stringify(document, null, 2)}\n`)
  } else {
    process.stdout.write(`${name}/${version} ${process.platform}-${process.arch} node-${process.version}\n`)
  }
}

/** The parsed plain form of `job validate`, or undefined when oclif must see the command line. */
export function plainValidate(argv: string[]): PlainValidate | undefined {
  if (argv[0] !== 'job' || argv[1] !== 'validate') return undefined
  const flags = new Set<string>()
  const files: string[] = []
  for (const arg of argv.slice(2)) {
    if (VALIDATE_FLAGS.has(arg)) {
      if (flags.has(arg)) return undefined
      flags.add(arg)
    } else if (arg.startsWith('-') && arg !== '-') {
      return undefined
    } else {
      files.push(arg)
    }
  }
  if (files.length === 0 || (flags.has('--frames') && flags.has('--no-frames'))) return undefined
  const json = flags.has('--json')
  // oclif also turns JSON on from GPUNET_CONTENT_TYPE, and may color JSON written to a terminal.
  if (process.env.GPUNET_CONTENT_TYPE !== undefined || (json && process.stdout.isTTY)) return undefined
  return {files, json, strict: flags.has('--strict'), frames: !flags.has('--no-frames')}
}

/**
 * The parsed plain form of `job exec JOB [FLAGS] -- CMD...`, or undefined when oclif must see the command line:
 * flags as `--name value` or `--name=value`, each at most once, a value that is not empty and does not start
 * with `-`, one job, a command after `--`, no network but the localnet named, and nothing in the environment that
 * changes how oclif reads or prints. A profile's network is known once the settings are resolved (runExec).
 */
export function plainExec(argv: string[], env: NodeJS.ProcessEnv = process.env): PlainExec | undefined {
  if (argv[0] !== 'job' || argv[1] !== 'exec') return undefined
  const dashes = argv.indexOf('--')
  if (dashes === -1 || dashes === argv.length - 1) return undefined
  const flags: Record<string, string> = {}
  const positional: string[] = []
  const words = argv.slice(2, dashes)
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (!word.startsWith('-')) {
      positional.push(word)
      continue
    }
    const equals = word.indexOf('=')
    const name = equals === -1 ? word : word.slice(0, equals)
    const value = equals === -1 ? words[++i] : word.slice(equals + 1)
    if (!EXEC_FLAGS.has(name) || value === undefined || value === '' || value.startsWith('-')) return undefined
    if (Object.hasOwn(flags, name.slice(2))) return undefined
    flags[name.slice(2)] = value
  }
  if (positional.length !== 1 || positional[0] === '') return undefined
  // Only the localnet's nodes serve `/exec` (docs/exec.md): elsewhere the command fails, and oclif may fail it.
  const network = flags.network ?? env.GPUNET_NETWORK ?? 'localnet'
  if (network !== 'localnet') return undefined
  // GPUNET_CONTENT_TYPE turns JSON on in oclif; GPUNET_DEBUG turns on its debug output.
  if (env.GPUNET_CONTENT_TYPE !== undefined || env.GPUNET_DEBUG !== undefined) return undefined
  return {job: positional[0]!, flags, cmd: argv.slice(dashes + 1)}
}

/**
 * Runs a plain `job exec` (src/cli/fast-exec.ts) and sets its exit code; a failure is rendered by BaseCommand's own
 * renderFailure (src/cli/failure.ts), as the oclif command's would be. On Node 20 the code comes from its bundle with
 * a code cache. False when its settings chose another network than the localnet (a profile's): then oclif serves it.
 */
async function runExec(plain: PlainExec): Promise<boolean> {
  try {
    const {runPlainExec} = (module as {enableCompileCache?: unknown}).enableCompileCache
      ? await import('./fast-exec.js')
      : (await import('./code-cache.js')).loadBundle<typeof import('./fast-exec.js')>(packageRoot(), 'exec', [
          'job',
          'exec',
        ])
    const code = await runPlainExec(plain)
    if (code === undefined) return false
    process.exitCode = code
  } catch (error) {
    const {renderFailure, toGpunetError} = await import('./failure.js')
    renderFailure(toGpunetError(error), false)
  }
  return true
}

async function runValidate({files, json, strict, frames}: PlainValidate): Promise<void> {
  const [{validateFiles}, {readStdinBytes}, paint] = await Promise.all([
    import('../lib/definition/validate-files.js'),
    import('../lib/terminal/stdin.js'),
    stdoutPaint(),
  ])
  const say = (line: string) => process.stdout.write(`${line}\n`)
  try {
    const {document, exitCode} = await validateFiles(files, {
      strict,
      frames,
      say: json ? undefined : say,
      paint,
      readStdin: readStdinBytes,
    })
    if (json) say(JSON.stringify(document, null, 2))
    process.exitCode = exitCode
  } catch (error) {
    // Only a bug lands here; it is reported exactly as the oclif path reports one.
    const {renderFailure, toGpunetError} = await import('./failure.js')
    renderFailure(toGpunetError(error), json)
  }
}

/**
 * The colors of stdout. chalk colors a stream that is not a terminal only when FORCE_COLOR (or a `--color` flag,
 * which the plain form never carries) asks for it, so then it is not loaded at all: its imports (tty, and Node's
 * namespace of `process`, which opens stdin) cost a tenth of this path.
 */
async function stdoutPaint(): Promise<Paint> {
  if (!process.stdout.isTTY && process.env.FORCE_COLOR === undefined) return (_style, text) => text
  const {stdoutColors} = await import('../lib/terminal/colors.js')
  return (style, text) => stdoutColors[style](text)
}
