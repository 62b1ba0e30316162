/**
 * The deployment API's API keys: `gpn_` and 32 random bytes, shown once when made. Only the key's SHA-256 is
 * stored, so the database alone opens nothing. A revoked key stays as a row, so its use is refused as revoked
 * rather than unknown.
 */
import type Database from 'better-sqlite3'

import {createHash, randomBytes, randomUUID, timingSafeEqual} from 'node:crypto'

import {parseKey} from '../../keys/base58-key.js'
import {ExitCode, GpunetError} from '../../errors.js'

/** Every key starts so: a reader (and a secret scanner) can tell it from other tokens. */
export const API_KEY_PREFIX = 'gpn_'

/** The random bytes of a key. */
const KEY_BYTES = 32

/** A key's text: the prefix and 43 base64url characters (32 bytes); nothing else is hashed or looked up. */
const KEY_SHAPE = /^gpn_[A-Za-z0-9_-]{43}$/

/** The longest name a key may carry, in characters. */
export const MAX_KEY_NAME_CHARS = 64

/** How many unrevoked keys one owner may hold. */
export const MAX_KEYS_PER_OWNER = 100

/** A key as listed: never the key itself. */
export interface ApiKeySummary {
  id: string
  name: string | null
  created_at: string
}

/** A key just made: the only time `key` is seen. */
export interface CreatedApiKey extends ApiKeySummary {
  key: string
}

/** What a presented key turned out to be. */
export type ApiKeyLookup = {owner: string; id: string} | 'unknown' | 'revoked'

/** The API keys of one database. */
export interface ApiKeys {
  /** Makes a key for `owner` (a base58 address). */
  create(owner: string, name?: string | null): Promise<CreatedApiKey>
  /** The owner's unrevoked keys, oldest first. */
  list(owner: string): Promise<ApiKeySummary[]>
  /** Revokes one of the owner's keys; another owner's, an unknown or an already revoked key is not found (7). */
  revoke(owner: string, id: string): Promise<ApiKeySummary>
  /** Whose key `key` is; 'unknown' also for text that is no key at all. */
  lookup(key: string): Promise<ApiKeyLookup>
}

/** A stored key: only its SHA-256. */
export interface ApiKeyRow {
  id: string
  owner: string
  name: string | null
  key_sha256: Buffer
  created_at: string
  revoked_at: string | null
}

/** Where the keys are kept: the SQLite file (below) or PostgreSQL (pg-store.ts); the rules are createApiKeys'. */
export interface ApiKeyRows {
  /** Inserts the row unless its owner already holds `max` unrevoked keys (then false), atomically. */
  insertUnder(max: number, row: Omit<ApiKeyRow, 'revoked_at'>): Promise<boolean>
  /** The owner's unrevoked keys, oldest first. */
  listLive(owner: string): Promise<ApiKeySummary[]>
  /** Marks the owner's unrevoked key revoked; answers it, or undefined when there was none such. */
  revoke(owner: string, id: string, at: string): Promise<ApiKeySummary | undefined>
  byHash(hash: Buffer): Promise<ApiKeyRow | undefined>
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    name TEXT,
    key_sha256 BLOB NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
  );
  CREATE INDEX IF NOT EXISTS api_keys_owner ON api_keys (owner);
`

/** The API keys' rows in a SQLite database opened with `openSqlite` (their table is made when missing). */
export function sqliteApiKeyRows(db: Database.Database): ApiKeyRows {
  db.exec(SCHEMA)
  const prepare = <P extends unknown[], R>(sql: string) => db.prepare<P, R>(sql)
  const insert = prepare<[string, string, string | null, Buffer, string], unknown>(
    'INSERT INTO api_keys (id, owner, name, key_sha256, created_at) VALUES (?, ?, ?, ?, ?)',
  )
  const countLive = prepare<[string], {n: number}>(
    'SELECT count(*) AS n FROM api_keys WHERE owner = ? AND revoked_at IS NULL',
  )
  const listLive = prepare<[string], ApiKeySummary>(
    'SELECT id, name, created_at FROM api_keys WHERE owner = ? AND revoked_at IS NULL ORDER BY rowid',
  )
  const markRevoked = prepare<[string, string, string], unknown>(
    'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND owner = ? AND revoked_at IS NULL',
  )
  const byId = prepare<[string], ApiKeySummary>('SELECT id, name, created_at FROM api_keys WHERE id = ?')
  const byHash = prepare<[Buffer], ApiKeyRow>('SELECT * FROM api_keys WHERE key_sha256 = ?')
  const insertUnder = db.transaction((max: number, row: Omit<ApiKeyRow, 'revoked_at'>): boolean => {
    if (countLive.get(row.owner)!.n >= max) return false
    insert.run(row.id, row.owner, row.name, row.key_sha256, row.created_at)
    return true
  })
  return {
    async insertUnder(max, row) {
      return insertUnder(max, row)
    },
    async listLive(owner) {
      return listLive.all(owner)
    },
    async revoke(owner, id, at) {
      return markRevoked.run(at, id, owner).changes === 1 ? byId.get(id) : undefined
    },
    async byHash(hash) {
      return byHash.get(hash)
    },
  }
}

/** The API keys kept in `rows`; `now` is unix ms. */
export function createApiKeys(rows: ApiKeyRows, now: () => number = Date.now): ApiKeys {
  return {
    async create(owner, name) {
      const checked = {owner: checkOwner(owner), name: checkName(name)}
      const key = `${API_KEY_PREFIX}${randomBytes(KEY_BYTES).toString('base64url')}`
      const created = {id: randomUUID(), name: checked.name, created_at: new Date(now()).toISOString()}
      if (!(await rows.insertUnder(MAX_KEYS_PER_OWNER, {...created, owner: checked.owner, key_sha256: sha256(key)}))) {
        throw new GpunetError('api_key_limit', `an owner may hold at most ${MAX_KEYS_PER_OWNER} API keys`, {
          exitCode: ExitCode.INVALID_INPUT,
          hint: 'revoke keys no longer used (`gpunet deployment api-key list`, then `api-key revoke ID`)',
        })
      }
      return {...created, key}
    },
    async list(owner) {
      return rows.listLive(checkOwner(owner))
    },
    async revoke(owner, id) {
      const found =
        typeof id === 'string' && id.length <= 64 ? await rows.revoke(owner, id, new Date(now()).toISOString()) : null
      if (!found) {
        // Another owner's key answers as an unknown one: a stranger learns nothing of which ids exist. The id is
        // named so a mistyped one shows; one past the length of an id is cut.
        const shown = String(id).length <= 64 ? String(id) : `${String(id).slice(0, 64)}…`
        throw new GpunetError('api_key_not_found', `no API key ${shown} of ${owner}`, {
          exitCode: ExitCode.NOT_FOUND,
          hint: 'list your keys with `gpunet deployment api-key list`',
        })
      }
      return found
    },
    async lookup(key) {
      if (typeof key !== 'string' || !KEY_SHAPE.test(key)) return 'unknown'
      const hash = sha256(key)
      // The lookup by hash leaks, by its timing, at most how a guess's hash compares to a stored one: of no use
      // without a preimage. The comparison that lets a key in is constant-time all the same.
      const row = await rows.byHash(hash)
      if (!row || !timingSafeEqual(Buffer.from(row.key_sha256), hash)) return 'unknown'
      return row.revoked_at === null ? {owner: row.owner, id: row.id} : 'revoked'
    },
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}

function checkOwner(owner: string): string {
  if (!parseKey(owner)) {
    throw new GpunetError('invalid_owner', 'the owner is not a base58 address', {exitCode: ExitCode.INVALID_INPUT})
  }
  return owner
}

/** A key's name: optional, one line of printable text up to MAX_KEY_NAME_CHARS. */
function checkName(name: string | null | undefined): string | null {
  if (name === undefined || name === null) return null
  // eslint-disable-next-line no-control-regex
  if (typeof name !== 'string' || name.length > MAX_KEY_NAME_CHARS || /[\u0000-\u001f\u007f-\u009f]/.test(name)) {
    throw new GpunetError(
      'invalid_api_key_name',
      `an API key's name is up to ${MAX_KEY_NAME_CHARS} characters of one line of text`,
      {exitCode: ExitCode.INVALID_INPUT},
    )
  }
  return name.trim() === '' ? null : name
}
