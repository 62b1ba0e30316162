import {readFile} from 'node:fs/promises'

import type {Network} from '../network.js'
import {tooDeepAt} from '../text/nesting.js'
import {describeReadError} from '../text/read-error.js'
import {type DefinitionIssue, type IssueCode} from './issue.js'
import {lintJobDefinition} from './lint.js'
import type {NetworkCheck, PreparedUpload} from './network-form/prepare.js'
import type {NetworkChange} from './network-form/translate.js'
import type {JobDefinition} from './schema.js'
import {type Anchor, detectFormat, parseSource} from './source.js'
import {passesCompiledCheck} from './semantic.js'
import type {ValidationResult} from './validate.js'

/** An issue pinned to a line and column of the user's file. */
export interface LocatedIssue extends DefinitionIssue {
  line: number
  column: number
}

/** What `gpunet job validate` reports for one file. */
export interface FileReport {
  file: string
  valid: boolean
  errors: LocatedIssue[]
  warnings: LocatedIssue[]
  /** With a network to check for: whether its nodes would take the job, and what it is uploaded as. */
  network?: NetworkVerdict
}

/** `job validate --network`'s verdict: the checks the job passed, and what the translation changed. */
export interface NetworkVerdict {
  name: Network
  accepted: boolean
  checks: NetworkCheck[]
  changes: NetworkChange[]
}

/** A report together with the file's text, for code frames, and what would be uploaded when a network was given. */
export interface FileCheck {
  report: FileReport
  text?: string
  upload?: PreparedUpload
}

const ANCHORS: Partial<Record<IssueCode, Anchor>> = {missing_field: 'parent', unknown_field: 'key'}

/**
 * How strict a check is: with `strict`, any warning makes the file invalid (for CI gates). With `network`, the
 * job is also checked as it would be uploaded there (network-form/prepare.ts): the network's verdict decides.
 */
export interface CheckOptions {
  strict?: boolean
  network?: Network
}

/** Validates and lints a definition's text, pinning every issue to its line and column. */
export async function checkDefinitionText(text: string, file: string, options: CheckOptions = {}): Promise<FileCheck> {
  const parsed = await parseSource(text, detectFormat(file, text))
  if (!parsed.ok) {
    const {code, message, line, column} = parsed.problem
    const errors = [{path: '', pointer: '', code, message, line, column}]
    return {report: {file, valid: false, errors, warnings: []}, text}
  }
  const {source} = parsed
  // zod is a fifth of what `gpunet job validate` would load: it loads only to explain a definition that fails.
  // Past the one nesting limit nothing else walks the value: the validator reports where it is too deep.
  // A definition the compiled check passes is within the limit (it measures the free-form members).
  const fast = passesCompiledCheck(source.value)
  const deep = !fast && tooDeepAt(source.value) !== null
  const result = fast
    ? {errors: undefined, success: true}
    : (await import('./validate.js')).validateJobDefinition(source.value)
  const lints = deep ? [] : lintJobDefinition(source.value)
  let errorIssues: DefinitionIssue[] = result.errors ?? []
  let network: NetworkVerdict | undefined
  let upload: PreparedUpload | undefined
  if (options.network && !deep) {
    // The spec's verdict is already known: zod does not run twice on a definition it refuses.
    const spec: ValidationResult = result.errors
      ? {success: false, errors: result.errors}
      : {success: true, data: source.value as JobDefinition}
    const {prepareUpload} = await import('./network-form/prepare.js')
    const prepared = await prepareUpload(source.value, options.network, spec)
    errorIssues = prepared.ok ? [] : prepared.issues
    if (prepared.ok) {
      upload = prepared.upload
      lints.push(...upload.beyondSpec)
    }
    network = {
      name: options.network,
      accepted: prepared.ok,
      checks: upload?.checks ?? [],
      changes: upload?.changes ?? [],
    }
  }
  const located = errorIssues.length > 0 || lints.length > 0 ? await source.locator() : undefined
  const locate = (issue: DefinitionIssue): LocatedIssue => ({
    ...issue,
    ...(located?.(issue.pointer, ANCHORS[issue.code] ?? 'value') ?? {line: 0, column: 0}),
  })
  const errors = errorIssues.map(locate).sort(byPosition)
  const warnings = lints.map(locate).sort(byPosition)
  const valid = errors.length === 0 && (network ? network.accepted : result.success)
  const report: FileReport = {file, valid: valid && !(options.strict && warnings.length > 0), errors, warnings}
  return {report: network ? {...report, network} : report, text, ...(upload ? {upload} : {})}
}

function byPosition(a: LocatedIssue, b: LocatedIssue): number {
  return a.line - b.line || a.column - b.column
}

/** Reads a file (or standard input for `-`) and checks it; an unreadable or binary file is reported, not thrown. */
export async function checkDefinitionFile(
  file: string,
  readStdin: () => Promise<Uint8Array | string>,
  options: CheckOptions = {},
): Promise<FileCheck> {
  const read = await readDefinitionText(file, readStdin)
  if ('problem' in read) {
    const issue: LocatedIssue = {path: '', pointer: '', ...read.problem, line: 0, column: 0}
    return {report: {file, valid: false, errors: [issue], warnings: []}}
  }
  return checkDefinitionText(read.text, file === '-' ? '<stdin>' : file, options)
}

/** Why a definition file could not be read as text. */
export interface ReadProblem {
  code: 'unreadable' | 'not_text'
  message: string
}

/**
 * Reads a definition file (standard input for `-`) as UTF-8 text. Binary data (a NUL byte, or bytes that are not
 * UTF-8) is refused as "not a text file", without echoing any of it.
 */
export async function readDefinitionText(
  file: string,
  readStdin: () => Promise<Uint8Array | string>,
): Promise<{text: string} | {problem: ReadProblem}> {
  let bytes: Uint8Array | string
  try {
    bytes = file === '-' ? await readStdin() : await readFile(file)
  } catch (error) {
    return {problem: {code: 'unreadable', message: `cannot read ${file}: ${describeReadError(error)}`}}
  }
  const text = decodeText(bytes)
  if (text === null) {
    const name = file === '-' ? 'standard input' : file
    return {
      problem: {
        code: 'not_text',
        message: `${name} is not a text file (it holds binary data): a job definition is JSON or YAML text`,
      },
    }
  }
  return {text}
}

/** The bytes as UTF-8 text, or null for binary data: a NUL byte (as git decides) or an invalid UTF-8 sequence. */
function decodeText(bytes: Uint8Array | string): string | null {
  if (typeof bytes === 'string') return bytes.includes('\0') ? null : bytes
  if (bytes.includes(0)) return null
  try {
    return new TextDecoder('utf-8', {fatal: true}).decode(bytes)
  } catch {
    return null
  }
}
