/** Asking before spending real tokens: a question on a terminal, and no spending on mainnet without one or --yes. */
import {ExitCode, GpunetError} from '../../errors.js'
import type {Network} from '../../network.js'
import {cancelled, canPrompt, confirm} from '../../terminal/prompt.js'

/** Asks "question" on devnet and mainnet unless `yes`; without a terminal, refuses on mainnet and goes on on devnet. */
export async function confirmSpend(network: Network, question: string, yes: boolean): Promise<void> {
  if (network === 'localnet' || yes) return
  if (canPrompt()) {
    if (await confirm(question)) return
    throw cancelled('Cancelled: nothing was uploaded or sent.')
  }
  if (network === 'mainnet') {
    throw new GpunetError(
      'confirmation_required',
      'refusing to spend tokens on mainnet without a terminal to confirm',
      {
        exitCode: ExitCode.USAGE,
        hint: 'pass --yes to confirm in scripts',
      },
    )
  }
}
