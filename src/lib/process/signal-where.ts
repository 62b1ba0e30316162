import {readdirSync, readFileSync} from 'node:fs'

/**
 * Signals every process but this one whose `/proc/<pid>/<file>` (`environ` or `cmdline`, NUL-separated) `matches`,
 * and answers how many it signalled. Processes that are gone meanwhile or another user's are passed over; without
 * /proc (not Linux) nothing is found.
 */
export function signalProcessesWhere(
  file: 'environ' | 'cmdline',
  matches: (content: Buffer) => boolean,
  signal: NodeJS.Signals,
): number {
  let pids: string[]
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))
  } catch {
    return 0
  }
  let signalled = 0
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue
    try {
      if (!matches(readFileSync(`/proc/${pid}/${file}`))) continue
      process.kill(Number(pid), signal)
      signalled++
    } catch {
      // gone already, or another user's
    }
  }
  return signalled
}
