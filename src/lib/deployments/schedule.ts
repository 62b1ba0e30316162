/** SCHEDULED's 5-field cron (minute hour day-of-month month day-of-week, UTC), read by croner, not by hand. */
import {Cron} from 'croner'

/** The longest expression taken: a cron line is short; anything longer is not one. */
const MAX_SCHEDULE = 200

function cron(expression: string): Cron {
  return new Cron(expression, {mode: '5-part', timezone: 'UTC'})
}

/** What is wrong with a schedule, or null when it is a 5-field cron that fires at least once more. */
export function scheduleProblem(expression: unknown, now = Date.now()): string | null {
  if (typeof expression !== 'string' || expression.trim() === '') return 'schedule must be a 5-field cron expression'
  if (expression.length > MAX_SCHEDULE) return `schedule must be at most ${MAX_SCHEDULE} characters`
  let next: Date | null
  try {
    next = cron(expression.trim()).nextRun(new Date(now))
  } catch (error) {
    const why = (error as Error).message.replace(/^CronPattern: /, '')
    return `schedule ${JSON.stringify(expression)} is not a 5-field cron expression (minute hour day month weekday): ${why}`
  }
  if (next === null) return `schedule ${JSON.stringify(expression)} never fires`
  return null
}

/** The schedule's next time strictly after `after` (ms), or null when it never fires again. */
export function nextScheduled(expression: string, after: number): number | null {
  return cron(expression.trim()).nextRun(new Date(after))?.getTime() ?? null
}
