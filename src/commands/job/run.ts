import * as Flags from '@oclif/core/flags'
import {writeFile} from 'node:fs/promises'

import {DEFAULT_RUN_IMAGE, oneOffDefinition} from '../../lib/definition/one-off.js'
import {checkPostableText} from '../../lib/definition/upload.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {splitCommand} from '../../cli/flags.js'
import {PostCommand, postFlags} from '../../cli/post-command.js'
import type {CreditPostReport, DryRunReport, PostReport} from '../../lib/job/posting.js'
import {withExitCodes} from '../../cli/exit-codes.js'

/** What `job run --json` adds to `job post`'s report: the definition it built and posted. */
type RunReport = (PostReport | DryRunReport | CreditPostReport) & {jobDefinition: unknown; saved?: string}

export default class JobRun extends PostCommand {
  static override summary = 'Run a command as a one-off job, without writing a definition first.'
  static override description = withExitCodes(
    `Builds a job definition with one container/run operation from the command line, then posts it exactly as \`job post\` does, with every check before anything is paid. The command words after -- are kept as an array, so your shell's quoting survives; without a command the image's own runs. The default image is ${DEFAULT_RUN_IMAGE}.

Put gpunet's flags before -- : everything after it belongs to the command, word for word, even words that look like gpunet's flags or their values. A word before -- that is no flag is refused (exit 2), since it would be taken for part of the command. --dry-run prints the definition and the quote; --save FILE writes the definition, as the start of a real one. --queue-timeout moves a job that waits to the next market that fits, as \`job post\` does (docs/jobs.md, "Failover").`,
    [
      [0, 'posted (with --wait: it got there and did not fail)'],
      [
        2,
        'usage: a bad flag or --env, a missing setting, mainnet without --yes, --save over an existing file, a --queue-timeout out of range or with --credits',
      ],
      [
        3,
        'the definition built is invalid, a secret it refers to is not stored, no market fits the need (or --market does not, with --strict), --queue-timeout found no market where a node took the job',
      ],
      [4, 'the wallet cannot pay (nothing uploaded or sent)'],
      [5, 'a service unreachable; on localnet, no node would run the job'],
      [8, '--wait saw the job end failed (the command exited non-zero)'],
      [9, '--wait saw the job stopped before it finished'],
      [124, '--wait ran out of time (--wait-timeout)'],
      [129, 'SIGHUP during --wait (the job goes on)'],
      [130, 'cancelled, or Ctrl+C during --wait (the job goes on)'],
      [143, 'SIGTERM during --wait, as CI cancels (the job goes on)'],
    ],
  )

  static override examples = [
    `<%= config.bin %> job run --wait -- sh -c 'echo "a b"; nproc'`,
    '<%= config.bin %> job run --image docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime --gpu --wait -- nvidia-smi',
    '<%= config.bin %> job run --image docker.io/library/nginx:1.27 --expose 80 --timeout 10m --wait-for ready',
    '<%= config.bin %> job run --env MODEL=small --env TOKEN=%%secrets.HF_TOKEN%% --dry-run -- python3 app.py',
    '<%= config.bin %> job run --save job.json --dry-run -- echo hello   # then edit job.json and `job post` it',
    '<%= config.bin %> job run --min-vram 24 --queue-timeout 5m -q -- python3 train.py   # prints the job that finally runs',
  ]

  // Not strict, so a word before -- gets gpunet's own error (with the fix) rather than oclif's "Unexpected argument".
  static override strict = false

  static override flags = {
    image: Flags.string({description: `container image [default: ${DEFAULT_RUN_IMAGE}]`, helpValue: 'IMAGE'}),
    gpu: Flags.boolean({description: 'the job needs a GPU'}),
    env: Flags.string({
      description: 'an environment variable of the container, KEY=VALUE (repeatable; %%secrets.NAME%% for a secret)',
      multiple: true,
      multipleNonGreedy: true,
      helpValue: 'KEY=VALUE',
    }),
    expose: Flags.integer({
      description: 'a port the container serves, published at a service URL (repeatable)',
      multiple: true,
      multipleNonGreedy: true,
      min: 1,
      max: 65535,
      helpValue: 'PORT',
    }),
    save: Flags.string({
      description: 'also write the definition built to FILE (never over an existing file)',
      helpValue: 'FILE',
    }),
    ...postFlags,
  }

  static paysOrDestroys = {what: 'wallet'} as const

  static mcp = {words: "the container's command and its arguments"}

  async run(): Promise<RunReport> {
    const {flagWords, command} = splitCommand(this.argv)
    // Only gpunet's words are parsed: oclif's leftovers mix flag values with the command's words.
    const {flags, argv: stray} = await this.parse(JobRun, flagWords)
    if (stray.length > 0) throw strayWords(stray as string[], command)
    const ownFlags = command.filter((word) => isOwnFlag(word))
    if (ownFlags.length > 0) {
      this.note(
        `Note: ${ownFlags.join(' ')} after -- ${ownFlags.length === 1 ? 'is' : 'are'} passed to the command, not to gpunet; put gpunet's flags before --.`,
      )
    }
    const definition = oneOffDefinition({
      image: flags.image,
      command,
      gpu: flags.gpu,
      env: flags.env,
      expose: flags.expose,
    })
    const text = `${JSON.stringify(definition, null, 2)}\n`
    const loaded = await checkPostableText(
      text,
      'the job built from the command line',
      this.settings.network,
      'check the image, --env and --expose values; nothing was uploaded or sent',
    )
    if (flags.save) await saveDefinition(flags.save, text)
    if (flags['dry-run']) {
      this.say('Definition:')
      for (const line of text.trimEnd().split('\n')) this.say(`  ${line}`)
    }
    const report = await this.postDefinition(flags, loaded)
    return {...report, jobDefinition: definition, ...(flags.save ? {saved: flags.save} : {})}
  }
}

/** The usage error of command words given before `--`, where they would be mistaken for flag values. */
function strayWords(words: string[], command: string[]): GpunetError {
  const shown = (list: string[]) =>
    list.map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : JSON.stringify(word))).join(' ')
  return new GpunetError('usage', `${shown(words)}: the command to run goes after --`, {
    exitCode: ExitCode.USAGE,
    hint: `put gpunet's flags first and the command last: gpunet job run [flags] -- ${shown([...words, ...command])}`,
  })
}

/** Whether a command word is also one of `job run`'s own flags, which was likely meant for gpunet. */
function isOwnFlag(word: string): boolean {
  const name = /^--(?:no-)?([a-z-]+)(?:=.*)?$/.exec(word)?.[1]
  return name !== undefined && (name === 'json' || Object.hasOwn(JobRun.flags, name))
}

/** Writes the definition to a new file; an existing one is kept (exit 2), since it may be the user's work. */
async function saveDefinition(file: string, text: string): Promise<void> {
  try {
    await writeFile(file, text, {flag: 'wx'})
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new GpunetError('file_exists', `${file} already exists; the definition was not saved`, {
        exitCode: ExitCode.USAGE,
        hint: 'pick another --save FILE, or remove that one first',
      })
    }
    throw new GpunetError('save_failed', `cannot write ${file}: ${(error as Error).message}`, {
      exitCode: ExitCode.INVALID_INPUT,
    })
  }
}
