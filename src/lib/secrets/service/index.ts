import {join} from 'node:path'

import {KEY_ENV, loadMasterKey, type MasterKeySetting} from './crypto.js'
import {databaseFailure, redactUrl} from './pg-failure.js'
import {openPostgresStorage} from './postgres.js'
import {createSecretsService, type SecretsService, type SecretsServiceOptions} from './server.js'
import {openSqliteStorage} from './sqlite.js'

export {type JobAuthority, type JobRecord, type JobRun} from './auth.js'
export {boundLoginPrefix, LOGIN_PREFIXES, loginMessage} from '../login-message.js'
export {chainJobAuthority, type ChainAuthorityOptions} from './chain-authority.js'
export {cachedJobAuthority, JOB_CACHE_TTL_MS} from './job-cache.js'
export {KEY_ENV, loadMasterKey, type MasterKeySetting} from './crypto.js'
export {openPostgresStorage} from './postgres.js'
export {redactUrl} from './pg-failure.js'
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
  /** The secretsKey setting (GPUNET_SECRETS_KEY), which wins over the key file; none: the key file. */
  env?: MasterKeySetting
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
  const key = env?.[KEY_ENV] ? KEY_ENV : keyFile
  return {service: createSecretsService({...rest, storage, masterKey}), storage: where, key}
}
