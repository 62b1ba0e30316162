/** PostgreSQL's failures as gpunet names them: unreachable (exit 5) or a refused login (exit 6), never the password. */
import {ExitCode, GpunetError} from '../../errors.js'

/** Errors of a database that cannot be reached (the network's, or PostgreSQL's own "cannot connect now"). */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'ECONNRESET',
  'EAI_AGAIN',
])
const UNAVAILABLE_SQLSTATES = new Set(['57P03', '3D000', '53300'])
const DENIED_SQLSTATES = new Set(['28P01', '28000'])

/** Whether a PostgreSQL error says the database cannot be reached now (down, restarting, refusing connections). */
export function isDatabaseUnreachable(error: unknown): boolean {
  const {code, message} = (error ?? {}) as {code?: string; message?: string}
  if (code && (UNREACHABLE.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08') || code === '57P01'))
    return true
  return /timeout|Connection terminated|connection.*(closed|ended)/i.test(message ?? '')
}

/** A PostgreSQL that could not be opened, as an error naming its address (never its password) and exit 5 or 6. */
export function databaseFailure(error: unknown, databaseUrl: string): unknown {
  const {code, message} = error as {code?: string; message?: string}
  const where = redactUrl(databaseUrl)
  const timedOut = /timeout/i.test(message ?? '')
  if (code && DENIED_SQLSTATES.has(code)) {
    return new GpunetError('database_denied', `PostgreSQL at ${where} refused the login: ${message}`, {
      exitCode: ExitCode.DENIED,
      hint: 'check the user and password in --database-url',
      cause: error,
    })
  }
  if ((code && (UNREACHABLE.has(code) || UNAVAILABLE_SQLSTATES.has(code))) || timedOut) {
    return new GpunetError('database_unreachable', `cannot reach PostgreSQL at ${where}: ${message}`, {
      exitCode: ExitCode.UNAVAILABLE,
      hint: 'check that the database server runs and --database-url names its host, port and database',
      cause: error,
    })
  }
  return error
}

/** The database URL without its password, for logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return 'postgres://…'
  }
}
