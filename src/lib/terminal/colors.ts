/**
 * The colors of gpunet's output, one chalk instance per stream: each colors only when its own stream should.
 * chalk decides from the stream (a terminal that supports color), `FORCE_COLOR` and `--no-color`; on top of that
 * `NO_COLOR` (any non-empty value, see no-color.org) turns color off unless `FORCE_COLOR` asks for it, as Node does.
 */
import {Chalk, type ChalkInstance, type ColorSupportLevel, supportsColor, supportsColorStderr} from 'chalk'

function level(detected: typeof supportsColor): ColorSupportLevel {
  if (process.env.NO_COLOR && process.env.FORCE_COLOR === undefined) return 0
  return detected ? detected.level : 0
}

/** Colors for text written to stdout. */
export const stdoutColors: ChalkInstance = new Chalk({level: level(supportsColor)})

/** Colors for text written to stderr: errors, warnings, progress. */
export const stderrColors: ChalkInstance = new Chalk({level: level(supportsColorStderr)})

/** The styles commands use. */
export type Style = 'red' | 'yellow' | 'green' | 'dim' | 'bold' | 'cyan'
