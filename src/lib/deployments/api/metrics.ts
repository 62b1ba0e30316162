/**
 * The manager's Prometheus `/metrics` (docs/deployment-manager.md, "Metrics"): deployments by status and strategy,
 * tasks by kind and status with their failed tries, the jobs listed by state, and each vault's SOL and token
 * balance. Every figure is read at scrape time from the store (one grouped read each) and the chain (one request per
 * 50 vaults, at most MAX_VAULTS of them), so several managers on one PostgreSQL answer the same, whichever is
 * scraped. Nothing secret or owner-identifying is in it: no owner, deployment id or name, key, API key or signature;
 * vault addresses are public on chain.
 */
import {getAssociatedTokenAddressSync} from '@solana/spl-token'
import {PublicKey} from '@solana/web3.js'
import {Gauge, Registry} from 'prom-client'

import {tokenAmount} from '../../market/rpc/balances.js'
import type {ManagerContext} from '../context.js'
import type {MetricCounts} from '../store/store.js'
import {DEPLOYMENT_STATUSES, type JobState, STRATEGIES, type TaskKind, type TaskStatus} from '../types.js'

/** The most vaults whose balances one scrape reads: past it, `vaults` still counts them all. */
export const MAX_VAULTS = 500
/** Vaults per chain request: each asks for the vault and its token account, 100 accounts, the RPC's most. */
const VAULTS_PER_REQUEST = 50
/** How long a scrape waits for the chain: past it the balances are left out (a scraper gives up at 10 s). */
export const BALANCES_TIMEOUT_MS = 5000
const TASK_KINDS: readonly TaskKind[] = ['LIST', 'EXTEND', 'STOP']
const TASK_STATUSES: readonly TaskStatus[] = ['PENDING', 'PROCESSING', 'DONE', 'FAILED']
const JOB_STATES: readonly JobState[] = ['QUEUED', 'RUNNING', 'COMPLETED', 'STOPPED']

/** What `/metrics` answers: the text and its content type. */
export interface MetricsText {
  contentType: string
  text: string
}

/**
 * The scrape of one manager: scrapes that arrive while one is being read share its answer, so a burst of scrapers
 * costs one read of the store and the chain.
 */
export function metricsScraper(ctx: ManagerContext): () => Promise<MetricsText> {
  let reading: Promise<MetricsText> | null = null
  return () => {
    reading ??= readMetrics(ctx).finally(() => {
      reading = null
    })
    return reading
  }
}

/** The metrics as they stand now, in Prometheus's text exposition format. */
export async function readMetrics(ctx: ManagerContext): Promise<MetricsText> {
  const counts = await ctx.store.metricCounts(MAX_VAULTS)
  const balances = await withinTime(vaultBalances(ctx, counts.vaults), BALANCES_TIMEOUT_MS).catch((error: unknown) => {
    ctx.log(`metrics: the vault balances could not be read: ${(error as Error).message}`)
    return null
  })
  const registry = new Registry()
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Gauge<L>({name: `deployment_manager_${name}`, help, labelNames, registers: [registry]})

  // Every combination is shown, 0 when there is none, so a series falls to 0 rather than vanishing.
  const deployments = gauge('deployments', 'Deployments by status and strategy.', ['status', 'strategy'])
  for (const status of DEPLOYMENT_STATUSES)
    for (const strategy of STRATEGIES)
      deployments.set({status, strategy}, count(counts.deployments, {status, strategy}))

  const tasks = gauge('tasks', 'Tasks (LIST, EXTEND, STOP) by kind and status.', ['task', 'status'])
  const failures = gauge(
    'task_failures',
    'Failed tries of the tasks, by kind: each failure is counted once, whether the task was retried or given up (status FAILED).',
    ['task'],
  )
  for (const task of TASK_KINDS) {
    for (const status of TASK_STATUSES) tasks.set({task, status}, count(counts.tasks, {task, status}))
    failures.set(
      {task},
      counts.tasks.filter((row) => row.task === task).reduce((sum, row) => sum + Number(row.failures ?? 0), 0),
    )
  }

  const jobs = gauge('jobs', 'Jobs listed by the deployments, by state.', ['state'])
  for (const state of JOB_STATES) jobs.set({state}, count(counts.jobs, {state}))

  gauge('vaults', 'Vaults this manager keeps (of every owner).', []).set(counts.vaultTotal)
  gauge('vault_balances_read', '1 when the vault balances below were read from the chain, 0 when it failed.', []).set(
    balances ? 1 : 0,
  )
  if (balances) {
    const sol = gauge('vault_sol_lamports', "A vault's SOL, in lamports.", ['vault'])
    const tokens = gauge('vault_token_base_units', "A vault's payment tokens, in base units.", ['vault'])
    for (const [vault, held] of balances) {
      sol.set({vault}, Number(held.lamports))
      tokens.set({vault}, Number(held.tokens))
    }
  }
  return {contentType: registry.contentType, text: await registry.metrics()}
}

/** `work`'s result, or a rejection once `ms` have gone by (the work goes on, its result unused). */
function withinTime<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
    timer.unref()
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

/** The rows' count for the labels, 0 when no row has them. */
function count<R extends {count: number}>(rows: readonly R[], labels: Partial<R>): number {
  const row = rows.find((r) => Object.entries(labels).every(([key, value]) => r[key as keyof R] === value))
  return Number(row?.count ?? 0)
}

/** Each vault's lamports and token base units, in requests of VAULTS_PER_REQUEST vaults. */
async function vaultBalances(
  ctx: ManagerContext,
  vaults: MetricCounts['vaults'],
): Promise<Map<string, {lamports: bigint; tokens: bigint}>> {
  const balances = new Map<string, {lamports: bigint; tokens: bigint}>()
  for (let at = 0; at < vaults.length; at += VAULTS_PER_REQUEST) {
    const chunk = vaults.slice(at, at + VAULTS_PER_REQUEST).map((vault) => new PublicKey(vault))
    const accounts = chunk.flatMap((vault) => [vault, getAssociatedTokenAddressSync(ctx.net.mint, vault, true)])
    const infos = await ctx.net.connection.getMultipleAccountsInfo(accounts)
    chunk.forEach((vault, i) => {
      const [wallet, token] = [infos[2 * i], infos[2 * i + 1]]
      balances.set(vault.toBase58(), {
        lamports: BigInt(wallet?.lamports ?? 0),
        tokens: token ? tokenAmount(token) : 0n,
      })
    })
  }
  return balances
}
