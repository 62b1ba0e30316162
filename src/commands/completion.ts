import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import * as Args from '@oclif/core/args'

import {BaseCommand} from '../cli/base-command.js'
import {packageRoot} from '../lib/package-root.js'

const SHELLS = ['bash', 'zsh', 'fish'] as const

export default class Completion extends BaseCommand {
  static override summary = 'Print the shell completion script for bash, zsh or fish.'
  static override description = `Completes commands, flags and the values of flags that take one of a list (--network, --wait-for, ...). The scripts are written when gpunet is built, from its command manifest: nothing of them runs when a command starts.

  bash:  source <(gpunet completion bash)      # in ~/.bashrc
  zsh:   source <(gpunet completion zsh)       # in ~/.zshrc
  fish:  gpunet completion fish > ~/.config/fish/completions/gpunet.fish`

  static override examples = [
    '<%= config.bin %> completion bash >> ~/.bashrc',
    '<%= config.bin %> completion fish > ~/.config/fish/completions/gpunet.fish',
  ]

  static override args = {
    shell: Args.string({description: 'the shell', options: [...SHELLS], required: true}),
  }

  async run(): Promise<{shell: string; script: string}> {
    const {args} = await this.parse(Completion)
    const script = readFileSync(join(packageRoot(), 'dist', 'completions', `gpunet.${args.shell}`), 'utf8')
    if (!this.jsonEnabled()) process.stdout.write(script)
    return {shell: args.shell, script}
  }
}
