// The invocations gpunet answers before oclif loads. Loading and starting oclif is most of what a short command
// costs (more than all of Node's own start on Node 24, see bench/cold-start.bench.ts), and two commands are often
// run in loops by scripts: `gpunet --version` and `gpunet job validate FILE...`. Only their plain forms are
// served here, where the result cannot differ from oclif's: anything else (help, a flag this path does not know,
// a repeated flag, `--`, no file) goes to oclif, which parses, explains and errs as for every other command.

import type {Paint} from './lib/definition/report-text.js'
import {installedPackage} from './lib/package-root.js'

/** The flags of `gpunet job validate` (all boolean) that the plain form may carry. */
const VALIDATE_FLAGS = new Set(['--json', '--strict', '--frames', '--no-frames'])

interface PlainValidate {
  files: string[]
  json: boolean
  strict: boolean
  frames: boolean
}

/** Serves argv when it is a plain `--version` or `job validate`; false means "hand it to oclif". */
export async function serveWithoutOclif(argv: string[]): Promise<boolean> {
  if (argv.includes('--version') && argv.every((arg) => arg === '--version' || arg === '--json')) {
    printVersion(argv.includes('--json'))
    return true
  }
  const validate = plainValidate(argv)
  if (!validate) return false
  await runValidate(validate)
  return true
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

async function runValidate({files, json, strict, frames}: PlainValidate): Promise<void> {
  const [{validateFiles}, {readStdinBytes}, paint] = await Promise.all([
    import('./lib/definition/validate-files.js'),
    import('./lib/stdin.js'),
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
    const {renderFailure, toGpunetError} = await import('./base-command.js')
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
  const {stdoutColors} = await import('./lib/colors.js')
  return (style, text) => stdoutColors[style](text)
}
