/**
 * A definition file made ready to post on a network: checked by the spec, in the network's form, accepted by the
 * network's validator (and on localnet by its node), warnings kept, serialized as it is uploaded.
 */
import type {Network} from '../network.js'
import {ExitCode, GpunetError, type JsonValue} from '../errors.js'
import {checkDefinitionText, type LocatedIssue, readDefinitionText} from './check.js'
import type {PreparedUpload} from './network-form/prepare.js'
import {NETWORK_VALIDATOR} from './network-form/read.js'
import {readStdinBytes} from '../terminal/stdin.js'

/** A definition ready to upload: what `job post` sends, and what the checks warned about. */
export interface PostableDefinition {
  upload: PreparedUpload
  warnings: LocatedIssue[]
}

/** Reads and checks a definition file for `network`; an unreadable, invalid or refused one is exit 3, nothing sent. */
export async function loadPostableDefinition(file: string, network: Network): Promise<PostableDefinition> {
  const read = await readDefinitionText(file, readStdinBytes)
  if ('problem' in read) {
    throw new GpunetError(read.problem.code, read.problem.message, {exitCode: ExitCode.INVALID_INPUT})
  }
  return checkPostableText(read.text, file, network)
}

/**
 * Checks a definition's text as `job post` does for `network` (`file` names it in errors). Invalid by the spec, or
 * refused by the network's form, validator or the localnet's node: exit 3 with every member named.
 */
export async function checkPostableText(
  text: string,
  file: string,
  network: Network,
  hint = `run \`gpunet job validate --network ${network} ${file}\` for details; nothing was uploaded or sent`,
): Promise<PostableDefinition> {
  const {report, upload} = await checkDefinitionText(text, file, {network})
  if (!report.valid || !upload) {
    const lines = report.errors.map((e) => `  ${file}:${e.line}:${e.column} ${e.path || '(document)'}: ${e.message}`)
    const first = report.errors[0]
    const refusal = first ? REFUSALS[first.code as keyof typeof REFUSALS] : undefined
    const what = refusal?.(network) ?? 'is not a valid job definition'
    throw new GpunetError(refusal ? first!.code : 'invalid_definition', `${file} ${what}:\n${lines.join('\n')}`, {
      exitCode: ExitCode.INVALID_INPUT,
      hint: first?.hint && refusal ? `${first.hint}; nothing was uploaded or sent` : hint,
      // The issues as `job validate --json` gives them, for tools that read them one by one.
      fields: {file, errors: report.errors.map(issueJson)},
    })
  }
  return {upload, warnings: report.warnings}
}

/** An issue as a JSON value: the members `job validate --json` prints for it. */
function issueJson(issue: LocatedIssue): {[key: string]: JsonValue} {
  const {path, pointer, code, message, line, column, hint} = issue
  return {path, pointer, code, message, line, column, ...(hint === undefined ? {} : {hint})}
}

/** How a refusal of the network's form is worded, by the code of its first issue. */
const REFUSALS = {
  no_network_equivalent: (network: Network) => `has members with no equivalent in the form ${network}'s nodes accept`,
  network_refused: (network: Network) => `would be refused by ${network}'s nodes (${NETWORK_VALIDATOR})`,
  localnet_cannot_run: () => "has members the localnet's node cannot run",
}
