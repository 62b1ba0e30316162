/**
 * `job get --out DIR`: a job's result as files. `result.json` (the bytes as stored), for each operation
 * `<op>.stdout.log` and `<op>.stderr.log` (`<op>.log` for lines whose stream the format does not say) and
 * `<op>.results.json` (what it extracted), and `manifest.json`, which maps each operation id to its files. Operation
 * ids become file names that cannot leave DIR and never collide; files are written piece by piece (no file is
 * first joined into one string), and at most MAX_OUT_OPERATIONS operations get files, so a result of 20,000
 * operations cannot fill a folder.
 */
import {closeSync, existsSync, mkdirSync, openSync, writeSync} from 'node:fs'
import {join} from 'node:path'

import {ExitCode, GpunetError} from '../errors.js'
import type {ResultView} from './result-view.js'

/** The most operations whose streams and results get files; the rest stay in result.json, as the manifest says. */
export const MAX_OUT_OPERATIONS = 256

/** A file's content in pieces, written in order. */
export type FilePieces = (string | Uint8Array)[]

/** What `manifest.json` holds: where each operation's files are, by its id as the result has it. */
export interface ResultManifest {
  result: 'result.json'
  operations: {id: string; files: Record<string, string>}[]
  /** Operations past MAX_OUT_OPERATIONS: in result.json only. */
  omittedOperations: number
}

/** A file name from an operation id: only letters, digits, `.`, `_` and `-`, never starting with a dot. */
export function operationFileName(id: string, index: number): string {
  const safe = id
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 100)
  return safe === '' || /^_*$/.test(safe) ? `op-${index + 1}${safe}` : safe
}

/**
 * The files of a result, by name, in the order they are written, and the manifest (written last, as
 * `manifest.json`). `bytes`, when given, is result.json exactly as stored.
 */
export function resultFiles(
  view: ResultView | null,
  content: unknown,
  bytes?: Uint8Array,
): {files: Map<string, FilePieces>; manifest: ResultManifest} {
  const files = new Map<string, FilePieces>()
  files.set('result.json', [bytes ?? (typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`)])
  // Names compared without case, as a case-insensitive file system would; `result` and `manifest` stay ours.
  const takenBases = new Set(['result', 'manifest'])
  const takenFiles = new Set(['result.json', 'manifest.json'])
  const ops = view?.ops ?? []
  const manifest: ResultManifest = {
    result: 'result.json',
    operations: [],
    omittedOperations: Math.max(0, ops.length - MAX_OUT_OPERATIONS),
  }
  for (const [index, op] of ops.slice(0, MAX_OUT_OPERATIONS).entries()) {
    const streams = new Map<string, FilePieces>()
    for (const entry of op.logs) {
      const kind = entry.stream ?? 'log'
      const pieces = streams.get(kind) ?? []
      pieces.push(entry.line, '\n')
      streams.set(kind, pieces)
    }
    const kinds = [...streams.keys()].map((kind) => [kind, kind === 'log' ? '.log' : `.${kind}.log`] as const)
    if (op.results) kinds.push(['results', '.results.json'])
    // Another operation's files (`x` writes x.stdout.log; `x.stdout` would write x.stdout.log for unnamed lines).
    const base = operationFileName(op.id, index)
    let name = base
    const clash = (candidate: string) =>
      takenBases.has(candidate.toLowerCase()) ||
      kinds.some(([, suffix]) => takenFiles.has(`${candidate}${suffix}`.toLowerCase()))
    for (let n = 2; clash(name); n++) name = `${base}-${n}`
    takenBases.add(name.toLowerCase())
    const entry: {id: string; files: Record<string, string>} = {id: op.id, files: {}}
    for (const [kind, suffix] of kinds) {
      const file = `${name}${suffix}`
      takenFiles.add(file.toLowerCase())
      entry.files[kind] = file
      files.set(file, kind === 'results' ? [`${JSON.stringify(op.results, null, 2)}\n`] : streams.get(kind)!)
    }
    manifest.operations.push(entry)
  }
  return {files, manifest}
}

/**
 * Writes the result's files and its manifest into `dir` (made when missing); any existing one is refused (exit 2)
 * unless `force`. Returns the paths written and how many operations got no files (past MAX_OUT_OPERATIONS).
 */
export function writeResultFiles(
  dir: string,
  view: ResultView | null,
  content: unknown,
  options: {force?: boolean; bytes?: Uint8Array} = {},
): {paths: string[]; omittedOperations: number} {
  const {files, manifest} = resultFiles(view, content, options.bytes)
  files.set('manifest.json', [`${JSON.stringify(manifest, null, 2)}\n`])
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
    for (const [name, pieces] of files) writePieces(join(dir, name), pieces)
  } catch (error) {
    throw new GpunetError('out_unwritable', `cannot write the result into ${dir}: ${(error as Error).message}`, {
      exitCode: ExitCode.INVALID_INPUT,
    })
  }
  return {paths: [...files.keys()].map((name) => join(dir, name)), omittedOperations: manifest.omittedOperations}
}

/** Writes pieces in batches of about 64 KiB: one system call per line would be slow, one string per file large. */
function writePieces(path: string, pieces: FilePieces): void {
  const fd = openSync(path, 'w')
  try {
    let batch: string[] = []
    let size = 0
    const flush = () => {
      if (batch.length > 0) writeSync(fd, batch.join(''))
      batch = []
      size = 0
    }
    for (const piece of pieces) {
      if (typeof piece !== 'string') {
        flush()
        writeSync(fd, piece)
        continue
      }
      batch.push(piece)
      size += piece.length
      if (size >= 65_536) flush()
    }
    flush()
  } finally {
    closeSync(fd)
  }
}
