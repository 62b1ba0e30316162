import type {WaitRequest} from '../lib/job/follow.js'
import type {WaitPoint} from '../lib/job/wait-point.js'

/** The parsed values of `waitFlags`. */
interface WaitFlagValues {
  wait: boolean
  'wait-for'?: string
  'wait-timeout': number
  logs: boolean
}

/** What `waitFlags` ask for, or null without --wait or --wait-for. */
export function waitRequest(flags: WaitFlagValues): WaitRequest | null {
  if (!flags.wait && flags['wait-for'] === undefined) return null
  return {
    // oclif checked it against WAIT_POINTS.
    until: flags['wait-for'] as WaitPoint | undefined,
    timeoutSeconds: flags['wait-timeout'],
    logs: flags.logs,
  }
}
