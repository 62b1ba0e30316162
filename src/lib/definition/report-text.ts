import type {FileCheck, LocatedIssue} from './check.js'
import {counted} from '../text/words.js'
import {codeFrame} from './frame.js'

/** How `gpunet job validate` colors a part of its report. */
export type Paint = (style: 'dim' | 'cyan' | 'yellow' | 'green' | 'red', text: string) => string

/** The human report of one checked file, line by line: each issue (with a code frame), then the verdict. */
export function fileCheckLines({report, text}: FileCheck, frames: boolean, paint: Paint): string[] {
  const lines: string[] = []
  const where = (i: LocatedIssue) => paint('dim', i.line > 0 ? `${report.file}:${i.line}:${i.column}` : report.file)
  const path = (i: LocatedIssue) => (i.path ? `  ${paint('cyan', i.path)}` : '')
  for (const issue of report.errors) {
    lines.push(`${where(issue)}${path(issue)}  ${issue.message}`)
    if (issue.hint) lines.push(`    ${paint('dim', `hint: ${issue.hint}`)}`)
    if (frames && text !== undefined && issue.line > 0) lines.push(indent(codeFrame(text, issue.line, issue.column)))
  }
  for (const issue of report.warnings) {
    lines.push(`${where(issue)}${path(issue)}  ${paint('yellow', 'warning:')} ${issue.message}`)
    if (issue.hint) lines.push(`    ${paint('dim', `hint: ${issue.hint}`)}`)
  }
  const counts = [plural(report.errors.length, 'error'), plural(report.warnings.length, 'warning')].filter(Boolean)
  const network = report.network
  if (network) {
    for (const {path, change} of network.changes)
      lines.push(`    ${paint('dim', `in the network's form: ${path} ${change}`)}`)
  }
  if (report.valid) {
    const tail = counts.length > 0 ? ` (${counts.join(', ')})` : ''
    const verdict = network
      ? `${nodesOf(network.name)} would run it (${network.checks.map((c) => `${c.by}: ${c.verdict}`).join('; ')})`
      : 'is a valid job definition'
    lines.push(`${paint('green', '✔')} ${report.file} ${verdict}${tail}`)
  } else if (network && !network.accepted) {
    lines.push(`${paint('red', '✖')} ${report.file}: ${nodesOf(network.name)} would refuse it: ${counts.join(', ')}`)
  } else {
    const strictNote = report.errors.length === 0 ? ' (--strict treats warnings as errors)' : ''
    lines.push(`${paint('red', '✖')} ${report.file}: ${counts.join(', ')}${strictNote}`)
  }
  return lines
}

function nodesOf(network: string): string {
  return network === 'localnet' ? "the localnet's node" : `${network}'s nodes`
}

function plural(count: number, noun: string): string {
  return count === 0 ? '' : counted(count, noun)
}

function indent(frame: string): string {
  return frame
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')
}
