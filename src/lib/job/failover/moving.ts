/**
 * Failover as it runs (docs/jobs.md, "Failover"): a job still QUEUED when its queue timeout has passed is delisted
 * (its deposit back) and listed again on the next market that fits, until one runs or none is left. Every move goes
 * through the journal (journal.ts), its transactions signed once and saved before they are sent, and the same code
 * (driveMove) settles a move a killed process left half done, from whatever the chain says now (steps.ts).
 */
import {existsSync} from 'node:fs'
import {setTimeout as sleep} from 'node:timers/promises'

import {PublicKey} from '@solana/web3.js'

import {crashPoint, pausePoint} from '../../deployments/crash-points.js'
import {ExitCode, GpunetError, isGpunetError, type JsonValue} from '../../errors.js'
import type {Wallet} from '../../keys/wallet.js'
import type {MarketNetwork} from '../../market/connect.js'
import {type JobView, readJob} from '../../market/jobs/jobs.js'
import {stopInstructions} from '../../market/jobs/manage.js'
import type {PlacementMarket, PlacementNeed} from '../../market/jobs/placement.js'
import {quotePost} from '../../market/jobs/post.js'
import {rpcCall} from '../../market/rpc/rpc.js'
import {prepareTransaction, resendSaved, sendSignedOnce, signOnce} from '../../market/rpc/send.js'
import {readPlacementMarkets} from '../../market/jobs/placement-markets.js'
import {type FailoverJournal, FINAL_STAGES, journalFile, type MoveRow, openFailoverJournal} from './journal.js'
import {type MoveFacts, nextMarket, nextStep} from './steps.js'

/** One move as `--json` prints it (`moves[]`) and stderr says it. */
export interface MoveEvent {
  /** The market the job waited on, and the one it moved to (null: none was left). */
  from: string
  to: string | null
  why: string
  oldJob: string
  /** The job listed on `to`; null when the move did not list one. */
  newJob: string | null
  /**
   * moved: the old job delisted (deposit back), the new one listed; taken: a node took the old job before its delist
   * landed (it runs; nothing listed); kept: the delist never landed (the old job waits on); ended: delisted, no market
   * left.
   */
  outcome: 'moved' | 'taken' | 'kept' | 'ended'
}

/** What driving a move needs: the chain, the journal, the wallet that pays a new listing, and the crash points' environment. */
export interface MoveContext {
  net: MarketNetwork
  journal: FailoverJournal
  wallet: () => Promise<Wallet>
  env: NodeJS.ProcessEnv
}

/** Polling interval of a queued job's wait. */
const POLL_MS = 500

/** More steps than any move takes (delist, record, list, record, with one resend each): a bound, not a budget. */
const MAX_STEPS = 12

/** Reads what the chain says of a move's jobs now. */
export async function moveFacts(net: MarketNetwork, row: MoveRow): Promise<MoveFacts> {
  const {connection} = net
  const old = await readJob(connection, net.programId, new PublicKey(row.oldJob)).then(
    (view): MoveFacts['old'] => (view.status === 'QUEUED' && view.run === null ? 'queued' : 'taken'),
    (error: unknown) => {
      if (isGpunetError(error) && error.code === 'job_not_found') return 'closed' as const
      throw error
    },
  )
  const height = await rpcCall(connection, () => connection.getBlockHeight('confirmed'))
  const landed = async (signature: string) => {
    const {value} = await rpcCall(connection, () =>
      connection.getSignatureStatuses([signature], {searchTransactionHistory: true}),
    )
    const status = value[0]
    return !!status && !status.err && status.confirmationStatus !== 'processed'
  }
  const newListed =
    row.newJob !== null &&
    (await rpcCall(connection, () => connection.getAccountInfo(new PublicKey(row.newJob!)))) !== null
  return {
    old,
    delistLanded: row.delist !== null && old === 'closed' && (await landed(row.delist.signature)),
    delistExpired: row.delist === null || height > row.delist.lastValidBlockHeight,
    newListed,
    listExpired: row.list === null || height > row.list.lastValidBlockHeight,
  }
}

/**
 * Takes a move from its stage to a final one, as the chain allows (steps.ts): resends saved bytes, records what
 * landed, lists the job again on the move's market when the delist landed and no listing did. `fresh`: the delist's
 * bytes were saved by this process and never sent, so they go out with the preflight.
 */
export async function driveMove(ctx: MoveContext, start: MoveRow, fresh = false): Promise<MoveRow> {
  let row = start
  for (let steps = 0; steps < MAX_STEPS; steps++) {
    if (FINAL_STAGES.includes(row.stage)) return row
    const step = nextStep(row, await moveFacts(ctx.net, row))
    if (step.do === 'nothing') return row
    if (step.do === 'record') {
      row =
        step.stage === 'delisted' ? ctx.journal.delisted(row.id) : ctx.journal.finish(row.id, finalStage(step.stage))
    } else if (step.do === 'resend-delist') {
      await sendDelist(ctx, row, fresh)
      fresh = false
    } else if (step.do === 'resend-list') {
      if (await resendSaved(ctx.net.connection, row.list!)) crashPoint('relist-sent', ctx.env)
    } else {
      row = await listAgain(ctx, row)
    }
  }
  throw new Error(`the move of job ${row.oldJob} did not settle in ${MAX_STEPS} steps (stage ${row.stage})`)
}

function finalStage(stage: MoveRow['stage']): (typeof FINAL_STAGES)[number] {
  if (!FINAL_STAGES.includes(stage)) throw new Error(`${stage} is not a final stage of a move`)
  return stage as (typeof FINAL_STAGES)[number]
}

/**
 * Sends the saved delist. The program refuses it once a node has taken the job (it has left the queue): that is the
 * race's signal, and the next facts say `taken`. Refused while the job still waits, it can never land: the move is
 * `kept` and the refusal thrown.
 */
async function sendDelist(ctx: MoveContext, row: MoveRow, fresh: boolean): Promise<void> {
  try {
    const landed = fresh
      ? await sendSignedOnce(ctx.net.connection, row.delist!)
      : await resendSaved(ctx.net.connection, row.delist!)
    if (landed) crashPoint('delist-sent', ctx.env)
  } catch (error) {
    if (!isGpunetError(error) || error.code !== 'transaction_failed') throw error
    if ((await moveFacts(ctx.net, row)).old !== 'queued') return
    ctx.journal.finish(row.id, 'kept')
    throw error
  }
}

/** Lists the job on the move's market with new keys, the bytes saved before they are sent (the project pays). */
async function listAgain(ctx: MoveContext, row: MoveRow): Promise<MoveRow> {
  const wallet = await ctx.wallet()
  if (wallet.address !== row.project) {
    throw new GpunetError(
      'move_wallet_mismatch',
      `job ${row.oldJob} was delisted to move to market ${row.toMarket}, and its new listing is paid by ${row.project}, not by this wallet`,
      {
        exitCode: ExitCode.DENIED,
        hint: 'run the command again with the wallet that posted the job (--wallet FILE): it lists the job once',
        fields: {job: row.oldJob, project: row.project},
      },
    )
  }
  const timeout = row.timeout === null ? undefined : BigInt(row.timeout)
  const quote = await quotePost(ctx.net, wallet, new PublicKey(row.toMarket!), row.cid, timeout)
  const [, job, run] = quote.transaction.signers
  const list = signOnce(quote.transaction)
  const saved = ctx.journal.listing(row.id, {job: job!.publicKey.toBase58(), run: run!.publicKey.toBase58(), list})
  crashPoint('relist-saved', ctx.env)
  if (await sendSignedOnce(ctx.net.connection, list)) crashPoint('relist-sent', ctx.env)
  return saved
}

/** The move event of a row that ended. */
export function moveEvent(row: MoveRow): MoveEvent {
  return {
    from: row.fromMarket,
    to: row.toMarket,
    why: row.why,
    oldJob: row.oldJob,
    newJob: row.stage === 'moved' ? row.newJob : null,
    outcome: finalStage(row.stage) as MoveEvent['outcome'],
  }
}

/** Whether a failover journal was ever written in this data folder (else there is no move to settle). */
export function hasJournal(dataDir: string): boolean {
  return existsSync(journalFile(dataDir))
}

/**
 * Settles the moves a killed process left open on this network (of `job` only, its old or new address, when given;
 * of the `project` wallet only, when given): each is finished or rolled back from the chain. Nothing is opened when
 * no journal was ever written.
 */
export async function settleMoves(
  ctx: Omit<MoveContext, 'journal'> & {dataDir: string; note: (line: string) => void; project?: string},
  job?: string,
): Promise<MoveRow[]> {
  if (!hasJournal(ctx.dataDir)) return []
  const journal = openFailoverJournal(journalFile(ctx.dataDir))
  try {
    const settled: MoveRow[] = []
    let names: Promise<(market: string) => string> | null = null
    for (const open of journal.open(ctx.net.name, job)) {
      if (open.program !== ctx.net.programId.toBase58()) continue
      if (ctx.project !== undefined && open.project !== ctx.project) continue
      const row = await driveMove({...ctx, journal}, open)
      names ??= marketNames(ctx.net)
      ctx.note(moveLine(row, `(settled from the failover journal, stage ${open.stage})`, await names))
      settled.push(row)
    }
    return settled
  } finally {
    journal.close()
  }
}

/** What the journal says `job` moved to: the job listed in its place, or null when it never moved (or not yet). */
export function movedTo(dataDir: string, network: string, job: string): string | null {
  if (!hasJournal(dataDir)) return null
  const journal = openFailoverJournal(journalFile(dataDir))
  try {
    const row = journal.movedFrom(network, job)
    return row?.stage === 'moved' ? row.newJob : null
  } finally {
    journal.close()
  }
}

/** One line on stderr for a move; `name` gives a market's name (its slug where known). */
export function moveLine(row: MoveRow, suffix = '', name: (market: string) => string = (m) => m): string {
  const tail = suffix ? ` ${suffix}` : ''
  const from = name(row.fromMarket)
  switch (row.stage) {
    case 'moved':
      return `Moved job ${row.oldJob} from market ${from} to ${name(row.toMarket!)} (new job ${row.newJob}): ${row.why}${tail}`
    case 'taken':
      return `Job ${row.oldJob} was taken by a node of market ${from} before its delist landed: it runs there, no new listing${tail}`
    case 'kept':
      return `Job ${row.oldJob} stays listed on market ${from}: its delist never landed${tail}`
    case 'ended':
      return `Delisted job ${row.oldJob} from market ${from}, its deposit back: ${row.why}; no market left to move it to${tail}`
    default:
      return `The move of job ${row.oldJob} is at ${row.stage}${tail}`
  }
}

/** What a failover watches: how long a job may wait, sped up on the localnet in tests, and what it moves by. */
export interface FailoverRequest {
  /** Seconds a job may stay QUEUED on a market before it moves. */
  queueTimeout: number
  /** The localnet's queueTimeoutScale (1 elsewhere): the wait is queueTimeout / scale. */
  scale: number
  need: PlacementNeed
  /** The definition's CIDv0 (uploaded) and the job's own timeout, or null for each market's. */
  cid: string
  timeout: number | null
  dataDir: string
  env: NodeJS.ProcessEnv
  note: (line: string) => void
}

/** A job that failover saw running (or over), the transaction that listed it, and every move on the way. */
export interface FailedOver {
  job: PublicKey
  signature: string
  moves: MoveEvent[]
}

/**
 * Waits until the job runs; past the queue timeout it moves it to the next market that fits (placement's order, the
 * markets tried left out), and so on. None left: the last job is delisted too (its deposit back) and the failover
 * ends with exit 3 naming the markets tried.
 */
export async function failOver(
  net: MarketNetwork,
  wallet: Wallet,
  first: {job: PublicKey; market: PublicKey; signature: string},
  request: FailoverRequest,
): Promise<FailedOver> {
  const journal = openFailoverJournal(journalFile(request.dataDir))
  const ctx: MoveContext = {net, journal, wallet: async () => wallet, env: request.env}
  const moves: MoveEvent[] = []
  const tried = [first.market.toBase58()]
  let current = {job: first.job, signature: first.signature}
  try {
    for (;;) {
      const view = await waitWhileQueued(net, current.job, (request.queueTimeout * 1000) / request.scale)
      if (view.status !== 'QUEUED' || view.run !== null) return {...current, moves}
      const markets = await readPlacementMarkets(net)
      const from = tried.at(-1)!
      const next = nextMarket(markets, request.need, 'token', tried)
      const scaled =
        request.scale === 1 ? '' : ` (${request.queueTimeout / request.scale} s at queueTimeoutScale ${request.scale})`
      const why = `still QUEUED after ${request.queueTimeout} s${scaled} on ${slugOf(markets, from)}`
      const row = await moveOnce(ctx, view, {from, to: next?.market ?? null, why, request})
      if (row === null) {
        moves.push({
          from,
          to: next?.market ?? null,
          why,
          oldJob: current.job.toBase58(),
          newJob: null,
          outcome: 'taken',
        })
        request.note(`Job ${current.job.toBase58()} was taken by a node before its delist: it runs, no new listing`)
        return {...current, moves}
      }
      moves.push(moveEvent(row))
      request.note(moveLine(row, '', (m) => slugOf(markets, m)))
      if (row.stage === 'taken') return {...current, moves}
      if (row.stage === 'ended') throw noMarketLeft(tried, markets, moves)
      if (row.stage === 'moved') {
        tried.push(row.toMarket!)
        current = {job: new PublicKey(row.newJob!), signature: row.list!.signature}
      }
    }
  } finally {
    journal.close()
  }
}

/**
 * One move of a job seen queued: its delist signed and journaled before it is sent, then driven to its end. Null
 * when the program refused the delist's simulation because a node took the job already (nothing journaled or sent).
 */
async function moveOnce(
  ctx: MoveContext,
  view: JobView,
  move: {from: string; to: string | null; why: string; request: FailoverRequest},
): Promise<MoveRow | null> {
  const {net} = ctx
  const wallet = await ctx.wallet()
  let prepared
  try {
    prepared = await prepareTransaction(
      net.connection,
      await stopInstructions(net, wallet, view),
      [wallet.keypair()],
      net.fees,
    )
  } catch (error) {
    if (!isGpunetError(error) || error.code !== 'transaction_failed') throw error
    const now = await readJob(net.connection, net.programId, view.address)
    if (now.status === 'QUEUED' && now.run === null) throw error
    return null
  }
  const row = ctx.journal.begin({
    network: net.name,
    program: net.programId.toBase58(),
    project: wallet.address,
    oldJob: view.address.toBase58(),
    fromMarket: move.from,
    toMarket: move.to,
    why: move.why,
    cid: move.request.cid,
    timeout: move.request.timeout,
    delist: signOnce(prepared),
  })
  crashPoint('delist-saved', ctx.env)
  // The race's test: a node is given the job here, after the decision and before the delist is sent.
  pausePoint('before-delist', ctx.env)
  return driveMove(ctx, row, true)
}

/** Polls the job until a node takes it (or it ends), or `ms` have passed with it still queued. */
async function waitWhileQueued(net: MarketNetwork, job: PublicKey, ms: number): Promise<JobView> {
  const deadline = Date.now() + ms
  for (;;) {
    const view = await readJob(net.connection, net.programId, job)
    if (view.status !== 'QUEUED' || view.run !== null || Date.now() >= deadline) return view
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())))
  }
}

/**
 * Names markets by their slug for the settle lines; the addresses when the markets cannot be read (a line is no
 * reason to fail a settle that has already landed).
 */
async function marketNames(net: MarketNetwork): Promise<(market: string) => string> {
  const markets = await readPlacementMarkets(net).catch(() => [])
  return (market) => slugOf(markets, market)
}

function slugOf(markets: PlacementMarket[], address: string): string {
  return markets.find((m) => m.market === address)?.slug ?? address
}

function noMarketLeft(tried: string[], markets: PlacementMarket[], moves: MoveEvent[]): GpunetError {
  const names = tried.map((m) => slugOf(markets, m))
  return new GpunetError(
    'no_market_left',
    `no node took the job on any market that fits: tried ${names.join(', ')}; every deposit is back`,
    {
      exitCode: ExitCode.INVALID_INPUT,
      hint: 'raise --queue-timeout, ask for less (gpunet market list shows free nodes), or post again later',
      fields: {tried, moves: moves.map((m) => ({...m}))} as {[key: string]: JsonValue},
    },
  )
}
