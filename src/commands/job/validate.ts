import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../base-command.js'
import {checkDefinitionFile, type FileCheck, type LocatedIssue} from '../../lib/definition/check.js'
import {ExitCode} from '../../lib/errors.js'
import {codeFrame} from '../../lib/definition/frame.js'
import {readStdinBytes} from '../../lib/stdin.js'

export default class JobValidate extends BaseCommand {
  static override summary = 'Check job definition files (JSON or YAML) against the job definition spec.'
  static override description =
    'Reports every problem of every file, each with its line and column, the member\'s path and a stable code, and warns about credentials written inline. Use "-" to read standard input. Exits 0 when every file is valid, 3 when any file is invalid or unreadable (with --strict, also when it has warnings).'

  static override examples = [
    '<%= config.bin %> job validate job.json',
    '<%= config.bin %> job validate jobs/*.json jobs/*.yaml',
    'cat job.yaml | <%= config.bin %> job validate -',
    '<%= config.bin %> job validate job.json --json | jq ".files[].errors[].message"',
    '<%= config.bin %> job validate --strict jobs/*.json   # in CI: warnings fail too',
  ]

  static override strict = false
  static override args = {
    file: Args.string({description: 'job definition files; "-" reads standard input', required: true}),
  }

  static override flags = {
    strict: Flags.boolean({description: 'treat warnings as errors: a file with warnings is invalid', default: false}),
    frames: Flags.boolean({
      description: 'show the offending lines of the file under each error',
      default: true,
      allowNo: true,
    }),
  }

  async run(): Promise<{valid: boolean; files: FileCheck['report'][]}> {
    const {argv, flags} = await this.parse(JobValidate)
    const files = argv as string[]
    const checks: FileCheck[] = []
    for (const file of files) checks.push(await checkDefinitionFile(file, readStdinBytes, {strict: flags.strict}))

    const valid = checks.every((c) => c.report.valid)
    if (!this.jsonEnabled()) {
      for (const check of checks) this.render(check, flags.frames)
    }
    if (!valid) this.setExitCode(ExitCode.INVALID_INPUT)
    return {valid, files: checks.map((c) => c.report)}
  }

  private render(check: FileCheck, frames: boolean): void {
    const {report, text} = check
    const where = (i: LocatedIssue) =>
      this.color('dim', i.line > 0 ? `${report.file}:${i.line}:${i.column}` : report.file)
    const path = (i: LocatedIssue) => (i.path ? `  ${this.color('cyan', i.path)}` : '')
    for (const issue of report.errors) {
      this.say(`${where(issue)}${path(issue)}  ${issue.message}`)
      if (issue.hint) this.say(`    ${this.color('dim', `hint: ${issue.hint}`)}`)
      if (frames && text !== undefined && issue.line > 0) this.say(indent(codeFrame(text, issue.line, issue.column)))
    }
    for (const issue of report.warnings) {
      this.say(`${where(issue)}${path(issue)}  ${this.color('yellow', 'warning:')} ${issue.message}`)
      if (issue.hint) this.say(`    ${this.color('dim', `hint: ${issue.hint}`)}`)
    }
    const counts = [plural(report.errors.length, 'error'), plural(report.warnings.length, 'warning')].filter(Boolean)
    if (report.valid) {
      const tail = counts.length > 0 ? ` (${counts.join(', ')})` : ''
      this.say(`${this.color('green', '✔')} ${report.file} is a valid job definition${tail}`)
    } else {
      const strictNote = report.errors.length === 0 ? ' (--strict treats warnings as errors)' : ''
      this.say(`${this.color('red', '✖')} ${report.file}: ${counts.join(', ')}${strictNote}`)
    }
  }
}

function plural(count: number, noun: string): string {
  return count === 0 ? '' : `${count} ${noun}${count === 1 ? '' : 's'}`
}

function indent(frame: string): string {
  return frame
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')
}
