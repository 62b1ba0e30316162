import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'

import {BaseCommand} from '../../cli/base-command.js'
import {networkFlags} from '../../cli/flags.js'
import {confirmUndoable} from '../../lib/terminal/prompt.js'
import {connectSecrets} from '../../lib/network-connection.js'

export default class SecretsDelete extends BaseCommand {
  static override summary = 'Delete a secret from the secrets service.'
  static override description = `Asks first at a terminal, unless --yes; without a terminal (scripts, CI) it refuses (exit 2) unless --yes. Jobs that refer to the secret as %%secrets.NAME%% will no longer receive it. Exits 7 when no secret has that name.`

  static override examples = [
    '<%= config.bin %> secrets delete HF_TOKEN',
    '<%= config.bin %> secrets delete OLD_KEY --yes --json',
  ]

  static override args = {
    name: Args.string({description: 'the secret to delete', required: true}),
  }

  static override flags = {
    ...networkFlags,
    yes: Flags.boolean({char: 'y', description: 'delete without asking (needed without a terminal)', default: false}),
  }

  static paysOrDestroys = {what: 'destroys'} as const

  async run(): Promise<{network: string; url: string; secrets: {name: string}[]; deleted: string}> {
    const {args, flags} = await this.parse(SecretsDelete)
    if (!flags.yes) {
      await confirmUndoable({
        question: `Delete the secret ${args.name} on ${this.settings.network}?`,
        doing: `delete the secret ${args.name} on ${this.settings.network}`,
        short: 'delete it',
        spared: 'Cancelled: nothing was deleted.',
      })
    }
    const client = await connectSecrets(this.settings, {
      allowUnboundLogin: flags['allow-unbound-login'],
      note: (line) => this.note(line),
    })
    await client.delete(args.name)
    this.say(`${this.color('green', '✔')} Deleted ${args.name} on ${this.settings.network} (${client.url})`)
    // `deleted` is deprecated (0.2): `secrets[].name`, the one shape of the secrets commands, kept for one minor version.
    return {network: this.settings.network, url: client.url, secrets: [{name: args.name}], deleted: args.name}
  }
}
