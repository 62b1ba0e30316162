import bs58 from 'bs58'
import {randomBytes} from 'node:crypto'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {generateKeypairBytes} from '../../src/lib/keys/ed25519.js'
import type {JobAuthority, JobRecord} from '../../src/lib/secrets/service/auth.js'
import {createSecretsService, type SecretsService, type ServiceLimits} from '../../src/lib/secrets/service/server.js'
import {openSqliteStorage} from '../../src/lib/secrets/service/sqlite.js'
import type {SecretStorage} from '../../src/lib/secrets/service/storage.js'
import {type Wallet, walletFromBytes} from '../../src/lib/keys/wallet.js'
import {openSqlite} from '../../src/lib/sqlite/open.js'
import {DATABASE_URL_ENV} from '../support/env.js'

/** A fresh keypair, in memory, with its 64 Solana bytes (to write as a wallet file). */
export function newWallet(): Wallet & {bytes: Uint8Array} {
  const bytes = generateKeypairBytes()
  return Object.assign(walletFromBytes(bytes), {bytes})
}

/** A random base58 public key (a job address, say). */
export function newAddress(): string {
  return bs58.encode(randomBytes(32))
}

const lastTimestamps = new Map<string, number>()

/**
 * A timestamp this wallet has not signed yet. Signatures are deterministic, so a second login in the same second
 * would be a replay: step back a second (the service accepts 60) instead of waiting.
 */
function freshTimestamp(address: string): number {
  const now = Math.floor(Date.now() / 1000)
  const last = lastTimestamps.get(address)
  const timestamp = last !== undefined && last <= now && last > now - 50 ? last - 1 : now
  lastTimestamps.set(address, timestamp)
  return timestamp
}

/** The POST /login parameters for `wallet`, signed at a fresh timestamp or at `timestamp`, under the spec's prefix unless told. */
export function signLogin(
  wallet: Wallet,
  options: {timestamp?: number; job?: string; prefix?: string} = {},
): Record<string, string | number> {
  const timestamp = options.timestamp ?? freshTimestamp(wallet.address)
  const message = `${options.prefix ?? 'service_secret_'}${timestamp}`
  const signature = bs58.encode(wallet.sign(new TextEncoder().encode(message)))
  return {address: wallet.address, signature, timestamp, ...(options.job ? {job: options.job} : {})}
}

/** A temporary folder, removed by the returned function. */
export async function tempDir(): Promise<{dir: string; remove: () => Promise<void>}> {
  const dir = await mkdtemp(join(tmpdir(), 'gpunet-secrets-'))
  return {dir, remove: () => rm(dir, {recursive: true, force: true})}
}

/** The job authority of the tests: jobs and definitions held in maps. */
export class MemoryAuthority implements JobAuthority {
  readonly jobs = new Map<string, JobRecord>()
  readonly definitions = new Map<string, unknown>()

  /** Puts a job that `node` runs for `poster`, its paid time ending in `seconds`, with `definition`. */
  run(
    job: string,
    options: {node: string; poster: string; seconds?: number; state?: JobRecord['state']; definition?: unknown},
  ): JobRecord {
    const timeout = 3600
    const record: JobRecord = {
      poster: options.poster,
      state: options.state ?? 'queued',
      timeout,
      runs: [{node: options.node, time: Math.floor(Date.now() / 1000) + (options.seconds ?? 600) - timeout}],
      definition: `definition-of-${job}`,
    }
    this.jobs.set(job, record)
    this.definitions.set(record.definition, options.definition ?? {})
    return record
  }

  async getJob(job: string): Promise<JobRecord | null> {
    return this.jobs.get(job) ?? null
  }

  async getDefinition(cid: string): Promise<unknown> {
    return this.definitions.get(cid)
  }
}

/** A storage backend under test: opens a fresh, isolated store each time. */
export interface Adapter {
  name: string
  /** Why the adapter cannot run here, or undefined when it can. */
  unavailable(): string | undefined
  open(): Promise<{storage: SecretStorage; cleanup: () => Promise<void>; databaseUrl?: string; dataDir: string}>
}

export const sqliteAdapter: Adapter = {
  name: 'SQLite',
  unavailable: () => undefined,
  async open() {
    const {dir, remove} = await tempDir()
    return {storage: openSqliteStorage(join(dir, 'secrets.db')), cleanup: remove, dataDir: dir}
  },
}

/**
 * Declares `suite` for each adapter. Without a PostgreSQL URL the PostgreSQL suites fail under CI=true and are
 * skipped elsewhere, with a notice naming the variable.
 */
export function forEachAdapter(title: string, suite: (adapter: Adapter) => void, adapters: Adapter[]): void {
  for (const adapter of adapters) {
    const reason = adapter.unavailable()
    if (reason && process.env.CI !== 'true') {
      process.stderr.write(
        `\n!!! SKIPPING ${title} on ${adapter.name}: ${reason}. Set ${DATABASE_URL_ENV}=postgres://… to run it.\n`,
      )
      describe.skip(`${title} (${adapter.name})`, () => suite(adapter))
      continue
    }
    describe(`${title} (${adapter.name})`, function () {
      if (reason) {
        it(`needs ${DATABASE_URL_ENV}`, () => {
          throw new Error(
            `${reason}: CI=true requires the PostgreSQL suites to run (.ci/run starts PostgreSQL and sets it)`,
          )
        })
        return
      }
      suite(adapter)
    })
  }
}

/** A running service on 127.0.0.1, port 0, over a fresh store of `adapter`. */
export async function startService(
  adapter: Adapter,
  options: {
    limits?: Partial<ServiceLimits>
    authority?: JobAuthority
    masterKey?: Buffer
    wrap?: (s: SecretStorage) => SecretStorage
    now?: () => number
    /** Take the client IP from X-Forwarded-For, so one test can stand for clients at many addresses. */
    trustProxy?: boolean
  } = {},
): Promise<{service: SecretsService; storage: SecretStorage; url: string; lines: string[]; stop: () => Promise<void>}> {
  const opened = await adapter.open()
  const storage = options.wrap ? options.wrap(opened.storage) : opened.storage
  const {cleanup} = opened
  const lines: string[] = []
  const service = createSecretsService({
    storage,
    masterKey: options.masterKey ?? randomBytes(32),
    authority: options.authority,
    limits: options.limits,
    log: (line) => lines.push(line),
    trustProxy: options.trustProxy,
    now: options.now,
  })
  const url = await service.listen(0, '127.0.0.1')
  return {
    service,
    storage,
    url,
    lines,
    async stop() {
      await service.close()
      await cleanup()
    },
  }
}

export type Encoding = 'json' | 'form'

/** One HTTP call with parameters in a JSON body or a form body (objects in a form travel as JSON text). */
export async function call(
  url: string,
  method: string,
  path: string,
  options: {
    params?: Record<string, unknown>
    encoding?: Encoding
    token?: string
    rawBody?: string
    contentType?: string
    headers?: Record<string, string>
  } = {},
): Promise<{status: number; body: unknown; text: string; headers: Headers}> {
  const headers: Record<string, string> = {...options.headers}
  if (options.token) headers.authorization = `Bearer ${options.token}`
  let body: string | undefined = options.rawBody
  if (options.params) {
    if ((options.encoding ?? 'json') === 'json') {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(options.params)
    } else {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      const form = new URLSearchParams()
      for (const [k, v] of Object.entries(options.params))
        form.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v))
      body = form.toString()
    }
  }
  if (options.contentType) headers['content-type'] = options.contentType
  const response = await fetch(`${url}${path}`, {method, headers, body})
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // Plain text answers (OK) stay text.
  }
  return {status: response.status, body: parsed, text, headers: response.headers}
}

/** Logs `wallet` in and returns the token; fails the test on any other answer. */
export async function login(
  url: string,
  wallet: Wallet,
  options: {job?: string; encoding?: Encoding} = {},
): Promise<string> {
  const answer = await call(url, 'POST', '/login', {
    params: signLogin(wallet, {job: options.job}),
    encoding: options.encoding,
  })
  if (answer.status !== 200) throw new Error(`login failed: ${answer.status} ${answer.text}`)
  return (answer.body as {token: string}).token
}

/** A service on SQLite and an isolated home (wallet, token cache) for CLI tests. */
export async function cliFixture(): Promise<{
  url: string
  env: NodeJS.ProcessEnv
  home: string
  stop: () => Promise<void>
  service: Awaited<ReturnType<typeof startService>>
}> {
  const service = await startService(sqliteAdapter)
  const {dir, remove} = await tempDir()
  const env = {
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, '.config'),
    GPUNET_SECRETS_URL: service.url,
    GPUNET_WALLET: '',
    GPUNET_NETWORK: '',
  }
  return {
    url: service.url,
    env,
    home: dir,
    service,
    async stop() {
      await service.stop()
      await remove()
    },
  }
}

/** Writes a SQLite file in the storage's first layout: one login signature, `before-upgrade`, kept until 1061. */
export function writeFirstLayout(file: string): void {
  const old = openSqlite(file)
  old.exec(`CREATE TABLE used_signatures (signature TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID;
            INSERT INTO used_signatures VALUES ('before-upgrade', 1061)`)
  old.close()
}
