import {readFile} from 'node:fs/promises'

import {type DefinitionIssue, type IssueCode} from './issue.js'
import {lintJobDefinition} from './lint.js'
import {type Anchor, detectFormat, parseSource} from './source.js'
import {validateJobDefinition} from './validate.js'

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
}

/** A report together with the file's text, for code frames. */
export interface FileCheck {
  report: FileReport
  text?: string
}

const ANCHORS: Partial<Record<IssueCode, Anchor>> = {missing_field: 'parent', unknown_field: 'key'}

/** How strict a check is: with `strict`, any warning makes the file invalid (for CI gates). */
export interface CheckOptions {
  strict?: boolean
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
  const result = validateJobDefinition(source.value)
  const lints = lintJobDefinition(source.value)
  const located = result.errors || lints.length > 0 ? await source.locator() : undefined
  const locate = (issue: DefinitionIssue): LocatedIssue => ({
    ...issue,
    ...(located?.(issue.pointer, ANCHORS[issue.code] ?? 'value') ?? {line: 0, column: 0}),
  })
  const errors = (result.errors ?? []).map(locate).sort(byPosition)
  const warnings = lints.map(locate).sort(byPosition)
  const valid = result.success && !(options.strict && warnings.length > 0)
  return {report: {file, valid, errors, warnings}, text}
}

function byPosition(a: LocatedIssue, b: LocatedIssue): number {
  return a.line - b.line || a.column - b.column
}

/** Reads a file (or standard input for `-`) and checks it; an unreadable file is reported, not thrown. */
export async function checkDefinitionFile(
  file: string,
  readStdin: () => Promise<string>,
  options: CheckOptions = {},
): Promise<FileCheck> {
  let text: string
  try {
    text = file === '-' ? await readStdin() : await readFile(file, 'utf8')
  } catch (error) {
    const reason = describeReadError(error)
    const issue: LocatedIssue = {
      path: '',
      pointer: '',
      code: 'unreadable',
      message: `cannot read ${file}: ${reason}`,
      line: 0,
      column: 0,
    }
    return {report: {file, valid: false, errors: [issue], warnings: []}}
  }
  return checkDefinitionText(text, file === '-' ? '<stdin>' : file, options)
}

/** A read failure in words, without a stack: "no such file", "permission denied", "it is a directory". */
export function describeReadError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code
  if (code === 'ENOENT') return 'no such file'
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied'
  if (code === 'EISDIR') return 'it is a directory, not a file'
  return (error as Error)?.message ?? String(error)
}
