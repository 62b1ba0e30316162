/** A definition file made ready to post: checked, warnings kept, `$schema` stripped, serialized as JSON. */
import {ExitCode, GpunetError} from '../errors.js'
import {checkDefinitionText, type LocatedIssue, readDefinitionText} from './check.js'
import type {JobDefinition} from './schema.js'
import {checkDefinitionSize} from './size.js'
import {detectFormat, parseSource} from './source.js'
import {readStdinBytes} from '../stdin.js'

export interface PostableDefinition {
  definition: JobDefinition
  /** What is uploaded: the definition as JSON without its editor-only `$schema` member. */
  bytes: Uint8Array
  warnings: LocatedIssue[]
}

/** Reads and checks a definition file; an unreadable or invalid one is exit 3 with the validator's errors. */
export async function loadPostableDefinition(file: string): Promise<PostableDefinition> {
  const read = await readDefinitionText(file, readStdinBytes)
  if ('problem' in read) {
    throw new GpunetError(read.problem.code, read.problem.message, {exitCode: ExitCode.INVALID_INPUT})
  }
  return checkPostableText(read.text, file)
}

/** Checks a definition's text as `job post` does (`file` names it in errors); invalid is exit 3 with every error. */
export async function checkPostableText(
  text: string,
  file: string,
  hint = `run \`gpunet job validate ${file}\` for details; nothing was uploaded or sent`,
): Promise<PostableDefinition> {
  const {report} = await checkDefinitionText(text, file)
  if (!report.valid) {
    const lines = report.errors.map((e) => `  ${file}:${e.line}:${e.column} ${e.path || '(document)'}: ${e.message}`)
    throw new GpunetError('invalid_definition', `${file} is not a valid job definition:\n${lines.join('\n')}`, {
      exitCode: ExitCode.INVALID_INPUT,
      hint,
    })
  }
  const parsed = await parseSource(text, detectFormat(file, text))
  if (!parsed.ok) throw new Error('a definition that validated failed to parse')
  return {...postableBytes(parsed.source.value as JobDefinition), warnings: report.warnings}
}

/** A valid definition as uploaded: without its editor-only `$schema` member, as indented JSON, within the size cap. */
export function postableBytes(valid: JobDefinition): {definition: JobDefinition; bytes: Uint8Array} {
  const definition = {...valid}
  delete definition.$schema
  const bytes = new TextEncoder().encode(`${JSON.stringify(definition, null, 2)}\n`)
  checkDefinitionSize(bytes)
  return {definition, bytes}
}
