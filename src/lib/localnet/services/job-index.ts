/**
 * The localnet's indexer: it follows the jobs program's accounts as the network's indexer follows the chain, keeps
 * every job it saw (delisted and cleaned ones too, whose accounts are gone), in a JSON-lines file in the data
 * directory, and answers `GET /jobs/?poster=…` in the indexer's shape (reference/network-job-plane.md §5), so
 * `gpunet job list` has one client path on every network.
 */
import {appendFileSync, existsSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import type {IncomingMessage, ServerResponse} from 'node:http'

import type {PublicKey} from '@solana/web3.js'

import {
  decodeJobAccount,
  decodeRunAccount,
  JOB_ACCOUNT_DISCRIMINATOR,
  RUN_ACCOUNT_DISCRIMINATOR,
} from '../../market/codec/accounts.js'
import {type IndexedJob, indexedJob} from '../../market/jobs/job-list.js'
import type {Chain} from '../chain.js'
import {RateLimiter} from '../../secrets/service/rate-limit.js'
import {sendJson, type SubService} from '../http.js'

/** The most jobs one page holds, as the network's indexer allows. */
export const MAX_PAGE = 50

interface Stored extends IndexedJob {
  /** Order of first sight: newest first means highest first. */
  order: number
}

/** Every job the localnet's chain has held, kept up to date from its account writes. */
export class JobIndex {
  private readonly jobs = new Map<string, Stored>()
  /** Open runs: run address -> job address. */
  private readonly runs = new Map<string, {job: string; node: string; time: number}>()
  private order = 0
  private readonly onAccounts = (keys: PublicKey[]) => this.update(keys)

  constructor(
    private readonly chain: Chain,
    private readonly file: string,
  ) {
    this.load()
    // What the chain holds now wins over the file (a localnet of an earlier version kept no index).
    const accounts = chain.programAccounts(chain.programId)
    this.update(accounts.map(({pubkey}) => pubkey))
    this.compact()
    chain.events.on('accounts', this.onAccounts)
  }

  /** Stops following the chain. */
  close(): void {
    this.chain.events.off('accounts', this.onAccounts)
  }

  /** The page of `poster`'s jobs the query asks for, newest first, with how many match in all. */
  query(params: URLSearchParams): {jobs: IndexedJob[]; totalJobs: number} {
    const poster = params.get('poster')
    const state = params.get('state')
    const market = params.get('market')
    const node = params.get('node')
    const matching = [...this.jobs.values()]
      .filter(
        (job) =>
          (!poster || job.project === poster) &&
          (!state || job.state === state) &&
          (!market || job.market === market) &&
          (!node || job.node === node),
      )
      .sort((a, b) => b.order - a.order)
    const limit = Math.min(MAX_PAGE, Math.max(1, Number(params.get('limit') ?? 10) || 10))
    const offset = Math.max(0, Number(params.get('offset') ?? 0) || 0)
    return {jobs: matching.slice(offset, offset + limit).map(({order: _, ...job}) => job), totalJobs: matching.length}
  }

  private update(keys: PublicKey[]): void {
    const ids = keys.map((key) => [key.toBase58(), key] as const)
    // Runs first: a job's state depends on whether its run is open. An account that does not decode is not indexed.
    for (const [id, key] of ids) guarded(() => this.readRun(id, key))
    for (const [id, key] of ids) guarded(() => this.readJob(id, key))
  }

  private readRun(id: string, key: PublicKey): void {
    const account = this.chain.account(key)
    if (!account) {
      this.runs.delete(id)
      return
    }
    if (!account.owner.equals(this.chain.programId) || !hasPrefix(account.data, RUN_ACCOUNT_DISCRIMINATOR)) return
    const run = decodeRunAccount(account.data)
    const job = run.job.toBase58()
    this.runs.set(id, {job, node: run.node.toBase58(), time: Number(run.time)})
    const known = this.jobs.get(job)
    if (known && known.state === 'QUEUED') {
      this.save({...known, state: 'RUNNING', node: run.node.toBase58(), timeStart: Number(run.time)})
    }
  }

  private readJob(id: string, key: PublicKey): void {
    const account = this.chain.account(key)
    const known = this.jobs.get(id)
    if (!account) {
      // Delisted (a queued job's account closed) or cleaned (a done one's): kept, as the network's indexer keeps it.
      if (known && !known.closed) {
        const delisted = known.state === 'QUEUED'
        this.save({...known, closed: true, ...(delisted ? {state: 'STOPPED' as const, delisted: true} : {})})
      }
      return
    }
    if (!account.owner.equals(this.chain.programId) || !hasPrefix(account.data, JOB_ACCOUNT_DISCRIMINATOR)) return
    const job = decodeJobAccount(account.data)
    const run = [...this.runs.values()].find((r) => r.job === id)
    const next: Stored = {...indexedJob(id, job, run ?? null), closed: false, delisted: false, order: known?.order ?? 0}
    if (!known || JSON.stringify({...known, order: 0}) !== JSON.stringify({...next, order: 0})) this.save(next)
  }

  private save(job: Stored): void {
    if (!this.jobs.has(job.address)) job.order = ++this.order
    this.jobs.set(job.address, job)
    appendFileSync(this.file, `${JSON.stringify(job)}\n`)
  }

  private load(): void {
    if (!existsSync(this.file)) return
    for (const line of readFileSync(this.file, 'utf8').split('\n')) {
      if (!line) continue
      try {
        const job = JSON.parse(line) as Stored
        this.jobs.set(job.address, job)
        this.order = Math.max(this.order, job.order)
      } catch {
        // A line cut short by a crash: the lines before it stand.
      }
    }
  }

  /** Rewrites the file with one line per job. */
  private compact(): void {
    const text = [...this.jobs.values()].map((job) => `${JSON.stringify(job)}\n`).join('')
    writeFileSync(`${this.file}.tmp`, text)
    renameSync(`${this.file}.tmp`, this.file)
  }
}

function guarded(read: () => void): void {
  try {
    read()
  } catch {
    // not an account of the layout its discriminator claims
  }
}

function hasPrefix(data: Buffer, prefix: Uint8Array): boolean {
  return data.length >= prefix.length && data.subarray(0, prefix.length).equals(prefix)
}

/** The network's indexer allows about this many requests per client in a window (reference §5). */
export const INDEXER_RATE_LIMIT = {limit: 20, windowMs: 30_000}

/** The indexer's `/jobs/` route on the localnet's HTTP port, with the network indexer's rate limit. */
export function jobIndexService(index: JobIndex, limiter = new RateLimiter(INDEXER_RATE_LIMIT)): SubService {
  return {
    name: 'indexer',
    matches: (path) => path === '/jobs' || path === '/jobs/',
    handle(req: IncomingMessage, res: ServerResponse) {
      req.resume()
      if (req.method !== 'GET') return sendJson(res, 405, {error: 'GET only'})
      // Every local client comes from 127.0.0.1, and shares one allowance, as a CI runner's jobs share one address.
      const client = req.socket.remoteAddress ?? 'local'
      const wait = limiter.blocked(client)
      if (wait !== undefined) {
        res.writeHead(429, {'content-type': 'application/json', 'retry-after': String(wait)})
        res.end(JSON.stringify({error: `rate limited: ${INDEXER_RATE_LIMIT.limit} requests per 30 s`}))
        return
      }
      limiter.hit(client)
      const params = new URL(req.url ?? '/', 'http://localhost').searchParams
      const state = params.get('state')
      if (state && !['QUEUED', 'RUNNING', 'COMPLETED', 'STOPPED'].includes(state))
        return sendJson(res, 400, {error: `state must be QUEUED, RUNNING, COMPLETED or STOPPED, not ${state}`})
      const limit = params.get('limit')
      if (limit !== null && !(Number(limit) >= 1 && Number(limit) <= MAX_PAGE))
        return sendJson(res, 400, {error: `limit must be 1 to ${MAX_PAGE}`})
      sendJson(res, 200, index.query(params))
    },
    close: () => index.close(),
  }
}
