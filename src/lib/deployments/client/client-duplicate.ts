/** `deployment duplicate`'s body, checked before anything is sent (exit 2, nothing created). */
import {ExitCode, GpunetError} from '../../errors.js'
import {parseAddress} from '../../market/connect.js'
import type {DuplicateBody} from './client.js'

/** The longest name a manager takes (the network's API's). */
const MAX_NAME = 100

/** The body of `duplicate` from the command's flags: only what was given, so the manager keeps the source's rest. */
export function duplicateBody(input: {name?: string; market?: string; start?: boolean}): DuplicateBody {
  const body: DuplicateBody = {}
  if (input.name !== undefined) {
    if (
      input.name.trim() === '' ||
      input.name.length > MAX_NAME ||
      [...input.name].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)
    )
      throw new GpunetError('invalid_name', `--name must be 1 to ${MAX_NAME} printable characters`, {
        exitCode: ExitCode.USAGE,
        hint: `leave --name out for "<source name> (copy)"; nothing was created`,
      })
    body.name = input.name
  }
  if (input.market !== undefined) body.market = parseAddress(input.market, '--market').toBase58()
  if (input.start) body.autostart = true
  return body
}
