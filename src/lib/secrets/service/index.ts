import {join} from 'node:path'

import {KEY_ENV, loadMasterKey} from './crypto.js'
import {ExitCode, GpunetError} from '../../errors.js'
import {openPostgresStorage} from './postgres.js'
import {createSecretsService, type SecretsService, type SecretsServiceOptions} from './server.js'
import {openSqliteStorage} from './sqlite.js'

export {type JobAuthority, type JobRecord, type JobRun} from './auth.js'
export {boundLoginPrefix, LOGIN_PREFIXES, loginMessage} from '../login-message.js'
export {chainJobAuthority, type ChainAuthorityOptions} from './chain-authority.js'
export {cachedJobAuthority, JOB_CACHE_TTL_MS} from './job-cache.js'
export {KEY_ENV, loadMasterKey} from './crypto.js'
export {openPostgresStorage} from './postgres.js'
export {
  createSecretsService,
  DEFAULT_LIMITS,
  type SecretsService,
  type SecretsServiceOptions,
  type ServiceLimits,
} from './server.js'
export {openSqliteStorage} from './sqlite.js'
export type {Quota, SecretStorage} from './storage.js'

export interface OpenServiceOptions extends Omit<SecretsServiceOptions, 'storage' | 'masterKey'> {
  /** Holds the SQLite file and the key file. */
  dataDir: string
  /** postgres://… to share one database between instances instead of the SQLite file. */
  databaseUrl?: string
  env?: NodeJS.ProcessEnv
}

/** The service as `gpunet secrets serve` runs it: key from the environment or `<dataDir>/secrets.key`, storage by URL. */
export async function openSecretsService(
  options: OpenServiceOptions,
): Promise<{service: SecretsService; storage: string; key: string}> {
  const {dataDir, databaseUrl, env, ...rest} = options
  const keyFile = join(dataDir, 'secrets.key')
  const masterKey = await loadMasterKey(keyFile, env)
  const storage = databaseUrl
    ? await openPostgresStorage({connectionString: databaseUrl}).catch((error: unknown) => {
        throw databaseFailure(error, databaseUrl)
      })
    : openSqliteStorage(join(dataDir, 'secrets.db'))
  const where = databaseUrl ? `PostgreSQL ${redactUrl(databaseUrl)}` : `SQLite ${join(dataDir, 'secrets.db')}`
  const key = (env ?? process.env)[KEY_ENV] ? KEY_ENV : keyFile
  return {service: createSecretsService({...rest, storage, masterKey}), storage: where, key}
}

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

/** A PostgreSQL that could not be opened, as an error naming its address (never its password) and exit 5 or 6. */
function databaseFailure(error: unknown, databaseUrl: string): unknown {
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
