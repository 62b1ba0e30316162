/**
 * `job get --out DIR`: a job's result as files. `result.json` (the document as stored), and for each operation
 * `<op>.stdout.log` and `<op>.stderr.log` (`<op>.log` for lines whose stream the format does not say) and
 * `<op>.results.json` (what it extracted). Operation ids become file names that cannot leave DIR.
 */
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {ExitCode, GpunetError} from './errors.js'
import type {ResultView} from './result-view.js'

/** A file name from an operation id: only letters, digits, `.`, `_` and `-`, never starting with a dot. */
export function operationFileName(id: string, index: number): string {
  const safe = id
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 100)
  return safe === '' || /^_*$/.test(safe) ? `op-${index + 1}${safe}` : safe
}

/** The files of a result, by name, in the order they are written. */
export function resultFiles(view: ResultView | null, content: unknown): Map<string, string> {
  const files = new Map<string, string>()
  files.set('result.json', typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`)
  const taken = new Set(['result'])
  for (const [index, op] of (view?.ops ?? []).entries()) {
    let name = operationFileName(op.id, index)
    for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${operationFileName(op.id, index)}-${n}`
    taken.add(name.toLowerCase())
    const streams = new Map<string, string[]>()
    for (const entry of op.logs) {
      const suffix = entry.stream ? `.${entry.stream}.log` : '.log'
      const lines = streams.get(suffix) ?? []
      lines.push(entry.line)
      streams.set(suffix, lines)
    }
    for (const [suffix, lines] of streams) files.set(`${name}${suffix}`, `${lines.join('\n')}\n`)
    if (op.results) files.set(`${name}.results.json`, `${JSON.stringify(op.results, null, 2)}\n`)
  }
  return files
}

/** Writes the result's files into `dir` (made when missing); any existing one is refused (exit 2) unless `force`. */
export function writeResultFiles(
  dir: string,
  view: ResultView | null,
  content: unknown,
  options: {force?: boolean} = {},
): string[] {
  const files = resultFiles(view, content)
  const existing = [...files.keys()].filter((name) => existsSync(join(dir, name)))
  if (existing.length > 0 && !options.force) {
    throw new GpunetError('out_exists', `${dir} already holds ${existing.join(', ')}; nothing was written`, {
      exitCode: ExitCode.USAGE,
      hint: 'pass --force to overwrite them, or pick another --out folder',
      fields: {files: existing},
    })
  }
  try {
    mkdirSync(dir, {recursive: true})
    for (const [name, text] of files) writeFileSync(join(dir, name), text)
  } catch (error) {
    throw new GpunetError('out_unwritable', `cannot write the result into ${dir}: ${(error as Error).message}`, {
      exitCode: ExitCode.INVALID_INPUT,
    })
  }
  return [...files.keys()].map((name) => join(dir, name))
}
