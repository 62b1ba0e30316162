import {readFile} from 'node:fs/promises'
import {parseEnv} from 'node:util'

import {describeReadError} from '../text/read-error.js'
import {ExitCode, GpunetError} from '../errors.js'
import {readStdin} from '../terminal/stdin.js'
import {secretProblem} from './limits.js'

/** Where `secrets set` takes a value from: standard input (the default), `@file`, or `--value` text. */
export type ValueSource =
  {kind: 'stdin'; read: () => Promise<string>} | {kind: 'file'; path: string} | {kind: 'text'; text: string}

/**
 * The value to store. A file is taken byte for byte; standard input loses one trailing newline, the one `echo`
 * and a terminal add, so `echo s3cret | gpunet secrets set X` stores `s3cret`.
 */
export async function readValue(name: string, source: ValueSource): Promise<string> {
  let value: string
  if (source.kind === 'text') value = source.text
  else if (source.kind === 'file') value = await readInputFile(source.path)
  else value = (await source.read()).replace(/\r?\n$/, '')
  if (value === '' && source.kind === 'stdin') {
    throw new GpunetError('empty_value', `no value for ${name} on standard input`, {
      exitCode: ExitCode.USAGE,
      hint: `pipe it in (printf %s "$VALUE" | gpunet secrets set ${name}) or read a file with: gpunet secrets set ${name} @FILE`,
    })
  }
  checkSecret(name, value)
  return value
}

/** The secrets of a dotenv file (`NAME=value` lines, `#` comments, quotes and `export` as in shells); `-` is stdin. */
export async function readEnvFile(path: string): Promise<Record<string, string>> {
  const entries = Object.entries(parseEnv(path === '-' ? await readStdin() : await readInputFile(path)))
  if (entries.length === 0) {
    throw new GpunetError('empty_env_file', `${path} has no NAME=value lines`, {exitCode: ExitCode.INVALID_INPUT})
  }
  for (const [name, value] of entries) checkSecret(name, value ?? '', path)
  return Object.fromEntries(entries) as Record<string, string>
}

/** Refuses a name or value the service would refuse, before anything is sent. */
export function checkSecret(name: string, value: string, file?: string): void {
  const problem = secretProblem(name, value)
  if (problem)
    throw new GpunetError(problem.code, file ? `${file}: ${problem.message}` : problem.message, {
      exitCode: ExitCode.INVALID_INPUT,
    })
}

async function readInputFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    throw new GpunetError('unreadable_file', `cannot read ${path}: ${describeReadError(error)}`, {
      exitCode: ExitCode.INVALID_INPUT,
    })
  }
}
