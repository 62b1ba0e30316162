import {BaseCommand} from '../../cli/base-command.js'
import {jobDefinitionJsonSchema} from '../../lib/definition/json-schema.js'

export default class JobSchema extends BaseCommand {
  static override summary = 'Print the JSON Schema (draft 2020-12) of a job definition, for editors.'
  static override description =
    'The schema is generated from the same zod schema that "job validate" uses; the package also ships it as schema/job-definition.schema.json. Point a definition\'s "$schema" member at a saved copy to get completion and checks in your editor.'

  static override examples = [
    '<%= config.bin %> job schema > job-definition.schema.json',
    '<%= config.bin %> job schema | jq ".properties.ops"',
  ]

  async run(): Promise<Record<string, unknown>> {
    await this.parse(JobSchema)
    const schema = jobDefinitionJsonSchema()
    this.say(JSON.stringify(schema, null, 2))
    return schema
  }
}
