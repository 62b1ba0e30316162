import * as Flags from '@oclif/core/flags'
import {readFile, writeFile} from 'node:fs/promises'

import {BaseCommand} from '../../cli/base-command.js'
import {describeReadError} from '../../lib/text/read-error.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {findTemplate, type JobTemplate, listTemplates} from '../../lib/definition/templates.js'

type InitResult = {templates: Omit<JobTemplate, 'file'>[]} | {template: string; file: string; definition?: unknown}

export default class JobInit extends BaseCommand {
  static override summary = 'List the job templates, or write one to start a job definition from.'
  static override examples = [
    '<%= config.bin %> job init',
    '<%= config.bin %> job init --template hello-world',
    '<%= config.bin %> job init --template ollama-inference --out llm.json',
    '<%= config.bin %> job init -t jupyter-notebook --out - | jq .ops',
  ]

  static override flags = {
    template: Flags.string({char: 't', description: 'template to write (run without flags to list them)'}),
    out: Flags.string({
      char: 'o',
      description: 'file to write, YAML when it ends in .yaml or .yml, else JSON; "-" prints JSON to standard output',
      default: 'job.json',
    }),
    force: Flags.boolean({char: 'f', description: 'overwrite the file if it exists', default: false}),
  }

  static paysOrDestroys = {what: 'destroys', whenFlag: 'force'} as const

  async run(): Promise<InitResult> {
    const {flags} = await this.parse(JobInit)
    if (!flags.template) {
      const templates = (await listTemplates()).map(({name, description}) => ({name, description}))
      const width = Math.max(...templates.map((t) => t.name.length))
      for (const t of templates) this.say(`${this.color('bold', t.name.padEnd(width))}  ${t.description}`)
      this.say()
      this.say(this.color('dim', `Write one with: ${this.config.bin} job init --template NAME [--out FILE]`))
      return {templates}
    }

    const template = await findTemplate(flags.template)
    const json = await readFile(template.file, 'utf8')
    if (flags.out === '-') {
      const text = json
      if (!this.jsonEnabled()) process.stdout.write(text)
      return {template: template.name, file: '-', definition: JSON.parse(text)}
    }
    // A .yaml or .yml file gets YAML, which `job post` reads as well; the YAML library is loaded only then.
    const text = /\.ya?ml$/i.test(flags.out) ? (await import('yaml')).stringify(JSON.parse(json)) : json
    try {
      await writeFile(flags.out, text, {flag: flags.force ? 'w' : 'wx'})
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new GpunetError('file_exists', `${flags.out} already exists`, {
          exitCode: ExitCode.USAGE,
          hint: 'choose another file with --out, or pass --force to overwrite it',
        })
      }
      throw new GpunetError('write_failed', `cannot write ${flags.out}: ${describeReadError(error)}`, {
        exitCode: ExitCode.FAILURE,
      })
    }
    this.say(`Wrote ${flags.out} from the ${template.name} template.`)
    this.say(this.color('dim', `Next: ${this.config.bin} job validate ${flags.out}`))
    return {template: template.name, file: flags.out}
  }
}
