/**
 * The deployments API, with the network's routes, bodies, objects and states, plus gpunet's vault and API-key routes
 * (docs/deployment-manager.md), under both spellings: the network's manager of 2026 serves `/deployments/...`,
 * `@nosana/api` 2.1.8 and gpunet's older clients send `/api/deployments/...`. Every route is authenticated: a
 * deployment of another owner is 404. Beside them `/health` and `/metrics` (metrics.ts), open.
 */
import {PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'
import type {FastifyInstance, FastifyPluginAsync, FastifyRequest} from 'fastify'

import {ApiError, badRequest, notFound} from '../../http/api-error.js'
import {createApiServer} from '../../http/api-server.js'
import {readBalances} from '../../market/rpc/balances.js'
import {rpcCall} from '../../market/rpc/rpc.js'
import {clientMessage, clientMessageJob, NETWORK_CLI_MESSAGE} from '../../node-api/protocol.js'
import type {ApiAuth} from './api-auth.js'
import {requestHeaders} from '../../http/request-headers.js'
import type {ManagerContext} from '../context.js'
import {readRecordedJob} from '../paying/chain-view.js'
import {scheduleProblem} from '../schedule.js'
import {deploymentEndpoints} from '../manager/endpoints.js'
import {metricsScraper} from './metrics.js'
import {
  deploymentObject,
  eventObject,
  jobDetailObject,
  jobObject,
  revisionObject,
  taskObject,
  vaultObject,
} from './objects.js'
import {
  archiveDeployment,
  createDeployment,
  deleteDeployment,
  duplicateDeployment,
  moveDeployment,
  ownDeployment,
  startDeployment,
  stopDeployment,
  updateAutoscale,
  updateReplicas,
  updateSchedule,
  updateTimeout,
} from '../manager/operations.js'
import {sharedVault, withdrawVault} from '../manager/vault-operations.js'
import {vaultWallet} from '../paying/paying.js'
import {createRevision, updateActiveRevision} from '../manager/revisions.js'
import {isOver} from '../strategies/index.js'
import {DEPLOYMENT_STATUSES, type DeploymentRow, type JobState, STRATEGIES, type TaskKind} from '../types.js'
import {policyOf} from '../autoscale/policy.js'
import {autoscaleStatus} from '../manager/autoscale-status.js'
import {
  bodyObject,
  parseAddressMember,
  parseAutoscale,
  parseBudget,
  parseCreateBody,
  parseDuplicateBody,
  parseReplicaCount,
  parseTimeout,
  parseWithdrawBody,
} from '../manager/validation.js'

/** The largest body taken: a deployment with its job definition. */
export const BODY_LIMIT = 1024 * 1024
const PAGE_SIZES = [10, 20, 50, 100]
const JOB_STATES: readonly JobState[] = ['QUEUED', 'RUNNING', 'COMPLETED', 'STOPPED']
const EVENT_CATEGORIES = ['Deployment', 'Event'] as const
const TASK_KINDS: readonly TaskKind[] = ['LIST', 'EXTEND', 'STOP']

/**
 * Where the deployments routes and gpunet's API keys are served: the network's spelling of 2026 and the one of
 * `@nosana/api` 2.1.8, each the same plugin registered once more (not routes copied), so they cannot drift apart.
 */
export const ROUTE_PREFIXES = ['', '/api'] as const

export interface DeploymentApi {
  readonly url: string
  /** Every route served, as `METHOD /path` (fastify's spelling of parameters, `:id`). */
  readonly routes: readonly string[]
  listen(port: number, host: string): Promise<string>
  close(): Promise<void>
}

/** Routes served beside the deployments, with their authentication: the localnet's credits (credits/), under /api. */
export type CreditsPlugin = FastifyPluginAsync<{auth: ApiAuth}>

/**
 * Builds the API over the manager's context and its authentication, with the credit routes when given;
 * `allowedOrigins` are the browser origins it answers besides its own while on loopback (the allowOrigin setting).
 */
export function createDeploymentApi(
  ctx: ManagerContext,
  auth: ApiAuth,
  credits?: CreditsPlugin,
  allowedOrigins?: readonly string[],
): DeploymentApi {
  const server = createApiServer({
    bodyLimit: BODY_LIMIT,
    allowedOrigins,
    onServerError: (error) => ctx.log(`deployments API: ${(error as Error).name}: ${(error as Error).message}`),
  })
  const routes: string[] = []
  server.app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push(`${method} ${route.url}`)
  })
  server.app.get('/health', async () => ({status: 'ok', network: ctx.network}))
  // Open, as the network's: a scraper carries no wallet signature, and nothing in it is secret (metrics.ts).
  const scrape = metricsScraper(ctx)
  server.app.get('/metrics', async (_request, reply) => {
    const {contentType, text} = await scrape()
    return reply.type(contentType).send(text)
  })
  for (const prefix of ROUTE_PREFIXES) {
    server.app.register(deploymentRoutes, {prefix: `${prefix}/deployments`, ctx, auth})
    server.app.register(apiKeyRoutes, {prefix: `${prefix}/api-keys`, auth})
  }
  // The credits are the network's dashboard API's routes, which keep their /api (docs/credits.md).
  if (credits) server.app.register(credits, {prefix: '/api', auth})
  return Object.assign(server, {routes})
}

/** The routes under /deployments (and /api/deployments): the network's, with the vaults and the node-API header. */
async function deploymentRoutes(app: FastifyInstance, {ctx, auth}: {ctx: ManagerContext; auth: ApiAuth}) {
  const owner = async (request: FastifyRequest) => (await auth.authenticate(requestHeaders(request.raw))).owner
  const own = async (request: FastifyRequest) =>
    ownDeployment(ctx, await owner(request), (request.params as {id: string}).id)
  // Created either way: without the deposit it answers the deployment in INSUFFICIENT_FUNDS, to fund and start.
  const autostarted = async (deployment: DeploymentRow, autostart: boolean) =>
    !autostart
      ? deployment
      : startDeployment(ctx, deployment).catch(async (error: unknown) => {
          if (!(error instanceof ApiError) || error.status !== 402) throw error
          return (await ctx.store.deployment(deployment.id)) ?? deployment
        })
  const view = async (d: DeploymentRow) => {
    const jobs = await ctx.store.jobs(d.id)
    return deploymentObject(d, jobs.filter((j) => !isOver(j.state)).length, await deploymentEndpoints(ctx, d, jobs))
  }

  app.get('', async (request) => {
    const who = await owner(request)
    const q = request.query as Record<string, string | undefined>
    const {offset, limit, order} = pageParams(q)
    const {rows, total} = await ctx.store.deployments({
      owner: who,
      offset,
      limit,
      order,
      statuses: listParam(q.status, 'status', DEPLOYMENT_STATUSES),
      strategies: listParam(q.strategy, 'strategy', STRATEGIES),
      vault: q.vault,
      search: q.search,
      id: q.id,
      name: q.name,
      createdAfter: dateParam(q.created_after, 'created_after'),
      createdBefore: dateParam(q.created_before, 'created_before'),
    })
    return {deployments: await Promise.all(rows.map(view)), pagination: pagination(offset, limit, rows.length, total)}
  })

  app.post('/create', async (request, reply) => {
    const who = await owner(request)
    const parsed = parseCreateBody(request.body, ctx.network)
    const deployment = await autostarted(await createDeployment(ctx, who, parsed), parsed.autostart)
    return reply.code(201).send(await view(deployment))
  })

  // The network's duplicate: a new deployment like the source (a DRAFT, or started with autostart, as create does).
  app.post('/:id/duplicate', async (request, reply) => {
    const source = await own(request)
    const parsed = parseDuplicateBody(request.body)
    const copy = await autostarted(await duplicateDeployment(ctx, source, parsed), parsed.autostart)
    return reply.code(201).send(await view(copy))
  })

  app.get('/vaults', async (request) => (await ctx.store.vaults(await owner(request))).map(vaultObject))
  app.post('/vaults/:vault/withdraw', async (request) => {
    const who = await owner(request)
    const ask = parseWithdrawBody(request.body === undefined ? {} : bodyObject(request.body))
    return {transaction: await withdrawVault(ctx, who, (request.params as {vault: string}).vault, ask)}
  })

  app.get('/:id', async (request) => view(await own(request)))
  // The network's answer: a page `{jobs, pagination}`, filtered by state (a comma-separated list) and revision.
  app.get('/:id/jobs', async (request) => {
    const d = await own(request)
    const q = request.query as Record<string, string | undefined>
    const page = pageParams(q)
    const states = listParam(q.state, 'state', JOB_STATES)
    const revision = q.revision === undefined ? undefined : Number(q.revision)
    if (revision !== undefined && !Number.isSafeInteger(revision))
      throw badRequest('invalid_revision', 'revision must be a whole number')
    const after = dateParam(q.created_after, 'created_after')
    const before = dateParam(q.created_before, 'created_before')
    const jobs = (await ctx.store.jobs(d.id)).filter(
      (j) =>
        (!states || states.includes(j.state)) &&
        (revision === undefined || j.revision === revision) &&
        (q.job === undefined || j.job === q.job) &&
        (after === undefined || j.created_at > after) &&
        (before === undefined || j.created_at < before),
    )
    const {items, pagination: at} = paged(jobs, page)
    return {jobs: items.map(jobObject), pagination: at}
  })
  app.get('/:id/jobs/:job', async (request) => {
    const d = await own(request)
    const job = await ctx.store.job((request.params as {job: string}).job)
    if (!job || job.deployment !== d.id)
      throw notFound(`job ${(request.params as {job: string}).job} in this deployment`)
    const revision = await ctx.store.revision(d.id, job.revision)
    const view = await readRecordedJob(ctx, job)
    const chain = view && {
      node: (view.run ? view.run.node : view.job.node).toBase58(),
      timeStart: Number(view.run ? view.run.time : view.job.timeStart),
      timeEnd: Number(view.job.timeEnd),
    }
    return jobDetailObject(job, d, revision ? (JSON.parse(revision.job_definition) as unknown) : null, chain)
  })
  // The network's answer: a page `{events, pagination}`, filtered by category and type (comma-separated lists).
  // created_after takes its own instant too: a follower reading from the last event's time (`deployment events
  // --follow`) then misses none recorded in the same millisecond, and drops the ones it had by their content.
  app.get('/:id/events', async (request) => {
    const d = await own(request)
    const q = request.query as Record<string, string | undefined>
    const page = pageParams(q)
    const categories = listParam(q.category, 'category', EVENT_CATEGORIES)
    const types = q.type?.split(',').map((type) => type.trim())
    const after = dateParam(q.created_after, 'created_after')
    const before = dateParam(q.created_before, 'created_before')
    const events = (await ctx.store.events(d.id)).filter(
      (e) =>
        (!categories || categories.includes(e.category)) &&
        (!types || types.includes(e.type)) &&
        (after === undefined || e.created_at >= after) &&
        (before === undefined || e.created_at < before),
    )
    const {items, pagination: at} = paged(events, page)
    return {events: items.map(eventObject), pagination: at}
  })
  // The network's answers: pages `{tasks, pagination}` (filtered by task kind and due time) and `{revisions,
  // pagination}` (by revision and creation time).
  app.get('/:id/tasks', async (request) => {
    const d = await own(request)
    const q = request.query as Record<string, string | undefined>
    const page = pageParams(q)
    const kinds = listParam(q.task, 'task', TASK_KINDS)
    const after = dateParam(q.due_after, 'due_after')
    const before = dateParam(q.due_before, 'due_before')
    const tasks = (await ctx.store.tasks(d.id)).filter(
      (t) =>
        (!kinds || kinds.includes(t.task)) &&
        (after === undefined || t.due_at > after) &&
        (before === undefined || t.due_at < before),
    )
    const {items, pagination: at} = paged(tasks, page)
    return {tasks: items.map(taskObject), pagination: at}
  })
  app.get('/:id/revisions', async (request) => {
    const d = await own(request)
    const q = request.query as Record<string, string | undefined>
    const page = pageParams(q)
    const revision = q.revision === undefined ? undefined : Number(q.revision)
    if (revision !== undefined && !Number.isSafeInteger(revision))
      throw badRequest('invalid_revision', 'revision must be a whole number')
    const after = dateParam(q.created_after, 'created_after')
    const before = dateParam(q.created_before, 'created_before')
    const revisions = (await ctx.store.revisions(d.id)).filter(
      (r) =>
        (revision === undefined || r.revision === revision) &&
        (after === undefined || r.created_at > after) &&
        (before === undefined || r.created_at < before),
    )
    const {items, pagination: at} = paged(revisions, page)
    return {revisions: items.map(revisionObject), pagination: at}
  })
  // The network's client sends the job definition itself as the body.
  app.post('/:id/create-revision', async (request) => {
    const d = await createRevision(ctx, await own(request), request.body)
    return {
      ...(await view(d)),
      revisions: (await ctx.store.revisions(d.id)).map(revisionObject),
    }
  })
  app.patch('/:id/update-active-revision', async (request) => {
    const d = await own(request)
    const changed = await updateActiveRevision(ctx, d, bodyObject(request.body).active_revision)
    return view(changed)
  })
  app.get('/:id/vault', async (request) => {
    const d = await own(request)
    const {connection} = ctx.net
    const balances = await rpcCall(connection, () => readBalances(connection, new PublicKey(d.vault), ctx.net.mint))
    return {vault: d.vault, sol_lamports: Number(balances.lamports), token_base_units: Number(balances.tokens)}
  })

  // The vault posts the deployment's jobs, so only its signature opens their nodes' APIs. It signs for the owner the
  // network CLI's node message, or gpunet's naming one of this deployment's jobs: nothing else (no login, no
  // transaction, no API credential of the vault's). A node checks only the vault's signature and the header's times,
  // so an API key, which can be revoked, gets only what expires: gpunet's message stamped with this manager's clock
  // (a node refuses it CLIENT_HEADER_EXPIRY_S later). Never the network CLI's message: its signature is the same
  // every time and its time part is not signed, so one such header cut short is a lasting credential.
  /** gpunet's node-API message as a caller writes it, for the hints. */
  const gpunetMessage = clientMessage('read', '<node>', '<job>', 0).replace(/=0$/, '=<unix ms>')
  app.get('/:id/header', async (request) => {
    const who = await auth.authenticate(requestHeaders(request.raw))
    const d = await ownDeployment(ctx, who.owner, (request.params as {id: string}).id)
    const q = request.query as Record<string, string | undefined>
    let message = q.message ?? NETWORK_CLI_MESSAGE
    if (q.includeTime !== undefined && q.includeTime !== 'true' && q.includeTime !== 'false')
      throw badRequest('invalid_include_time', 'includeTime must be true or false')
    if (who.via === 'api-key' && (message === NETWORK_CLI_MESSAGE || q.includeTime === 'false'))
      throw new ApiError(
        403,
        'lasting_header_refused',
        "an API key gets only gpunet's node-API message with a time part: a header that outlives the key's revocation " +
          'is signed for the wallet headers only',
        `ask with message=${gpunetMessage}&includeTime=true`,
      )
    if (message !== NETWORK_CLI_MESSAGE) {
      const job = clientMessageJob(message)
      if (job === null || (await ctx.store.job(job))?.deployment !== d.id)
        throw badRequest(
          'message_refused',
          "the vault signs only a node-API message naming one of this deployment's jobs",
          `gpunet's: ${gpunetMessage}`,
        )
      // The caller's time could lie ahead (a node takes up to a minute): for a key, this manager's clock starts it.
      if (who.via === 'api-key') message = message.replace(/ at=\S+$/, ` at=${ctx.now()}`)
    }
    const signature = bs58.encode((await vaultWallet(ctx, d.vault)).sign(Buffer.from(message, 'utf8')))
    return {header: q.includeTime === 'false' ? `${message}:${signature}` : `${message}:${signature}:${ctx.now()}`}
  })

  const transition = (path: string, act: (d: DeploymentRow) => Promise<DeploymentRow>) =>
    app.post(`/:id/${path}`, async (request) => {
      const d = await act(await own(request))
      return {status: d.status, updated_at: new Date(d.updated_at).toISOString()}
    })
  transition('start', (d) => startDeployment(ctx, d))
  transition('stop', (d) => stopDeployment(ctx, d))
  transition('archive', (d) => archiveDeployment(ctx, d))

  app.delete('/:id', async (request, reply) => {
    await deleteDeployment(ctx, await own(request))
    return reply.code(204).send()
  })
  app.patch('/:id/update-replica-count', async (request) => {
    const d = await own(request)
    const changed = await updateReplicas(ctx, d, parseReplicaCount(bodyObject(request.body).replicas))
    return {replicas: changed.replicas, updated_at: new Date(changed.updated_at).toISOString()}
  })
  // The network's update-market; on this manager a running deployment moves make-before-break (manager/move.ts).
  app.patch('/:id/update-market', async (request) => {
    const d = await own(request)
    const market = parseAddressMember(bodyObject(request.body).market, 'market')
    const changed = await moveDeployment(ctx, d, market)
    return {
      market: changed.market,
      move_from: changed.move_from ?? null,
      status: changed.status,
      updated_at: new Date(changed.updated_at).toISOString(),
    }
  })
  // gpunet's own: the autoscaling policy (null ends it) and the budget (null ends it, absent leaves it), every member
  // checked before anything is stored (400, nothing changed); answers the deployment.
  app.patch('/:id/update-autoscale', async (request) => {
    const d = await own(request)
    const body = bodyObject(request.body)
    if (body.autoscale === undefined && body.budget === undefined)
      throw badRequest('invalid_body', 'give autoscale (a policy, or null to end it), budget, or both')
    const policy = body.autoscale === undefined ? policyOf(d) : (parseAutoscale(body.autoscale, d.strategy) ?? null)
    return view(await updateAutoscale(ctx, d, policy, parseBudget(body.budget)))
  })
  app.get('/:id/autoscale', async (request) => autoscaleStatus(ctx, await own(request)))
  // The network's update-schedule changes a SCHEDULED deployment's cron; every other strategy has none to change.
  app.patch('/:id/update-schedule', async (request) => {
    const d = await own(request)
    const {schedule} = bodyObject(request.body)
    if (d.strategy !== 'SCHEDULED')
      throw badRequest(
        'not_scheduled',
        `deployment ${d.id} is ${d.strategy}: only a SCHEDULED deployment has a schedule to change`,
      )
    const problem = scheduleProblem(schedule)
    if (problem) throw badRequest('invalid_schedule', problem)
    const changed = await updateSchedule(ctx, d, (schedule as string).trim())
    return {schedule: changed.schedule, updated_at: new Date(changed.updated_at).toISOString()}
  })
  app.patch('/:id/update-timeout', async (request) => {
    const d = await own(request)
    const changed = await updateTimeout(ctx, d, parseTimeout(bodyObject(request.body).timeout))
    return {timeout: changed.timeout, updated_at: new Date(changed.updated_at).toISOString()}
  })

  // The owner's shared vault, got or made, as the network's `vaults/create`: with the wallet only, as its client says.
  app.post('/vaults/create', async (request) => vaultObject(await sharedVault(ctx, await walletOwner(auth, request))))
}

/** The routes under /api-keys (and /api/api-keys): made, listed and revoked with the wallet only, so a leaked key cannot mint more. */
async function apiKeyRoutes(app: FastifyInstance, {auth}: {auth: ApiAuth}) {
  app.post('', async (request, reply) => {
    const who = await walletOwner(auth, request)
    const body = request.body === undefined ? {} : bodyObject(request.body)
    if (body.name !== undefined && (typeof body.name !== 'string' || body.name.length > 100))
      throw badRequest('invalid_name', 'name must be a string of at most 100 characters')
    return reply.code(201).send(await auth.apiKeys.create(who, body.name as string | undefined))
  })
  app.get('', async (request) => auth.apiKeys.list(await walletOwner(auth, request)))
  app.delete('/:id', async (request, reply) => {
    // Awaited: the 204 says the key is revoked, and a refusal (an unknown id, another owner's) is the route's 404.
    await auth.apiKeys.revoke(await walletOwner(auth, request), (request.params as {id: string}).id)
    return reply.code(204).send()
  })
}

/** The owner of a request signed with the wallet headers; 403 for an API key. */
async function walletOwner(auth: ApiAuth, request: FastifyRequest): Promise<string> {
  const who = await auth.authenticate(requestHeaders(request.raw))
  if (who.via !== 'wallet')
    throw new ApiError(403, 'wallet_required', 'API keys are managed with the wallet headers, not with an API key')
  return who.owner
}

/** An ISO date (or unix ms) of the query, in ms; 400 when it is neither. */
function dateParam(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined
  const ms = /^\d{1,15}$/.test(value) ? Number(value) : Date.parse(value)
  if (!Number.isFinite(ms)) throw badRequest(`invalid_${name}`, `${name} must be an ISO date or unix milliseconds`)
  return ms
}

interface PageParams {
  offset: number
  limit: number
  order: 'asc' | 'desc'
}

/** The page a list route's query asks for: `limit` (10, 20, 50, 100; 10 by default), `cursor`, `sort_order`. */
function pageParams(q: Record<string, string | undefined>): PageParams {
  const limit = q.limit === undefined ? 10 : Number(q.limit)
  if (!PAGE_SIZES.includes(limit)) throw badRequest('invalid_limit', `limit must be one of ${PAGE_SIZES.join(', ')}`)
  const offset = q.cursor === undefined ? 0 : cursorOffset(q.cursor)
  const order = q.sort_order ?? 'desc'
  if (order !== 'asc' && order !== 'desc') throw badRequest('invalid_sort_order', 'sort_order must be asc or desc')
  return {offset, limit, order}
}

/** The `pagination` member of a page of `total` items from `offset`, `count` of them on it. */
function pagination(offset: number, limit: number, count: number, total: number) {
  return {
    cursor_next: offset + count < total ? cursorOf(offset + limit) : null,
    cursor_prev: offset > 0 ? cursorOf(Math.max(0, offset - limit)) : null,
    total_items: total,
  }
}

/** One page of rows the store gave oldest first. */
function paged<T>(rows: T[], {offset, limit, order}: PageParams) {
  const ordered = order === 'desc' ? [...rows].reverse() : rows
  const items = ordered.slice(offset, offset + limit)
  return {items, pagination: pagination(offset, limit, items.length, rows.length)}
}

/** A filter that takes one value or a comma-separated list, as the network's API does; each must be known. */
function listParam<T extends string>(value: string | undefined, name: string, known: readonly T[]): T[] | undefined {
  if (value === undefined) return undefined
  const values = value.split(',').map((part) => part.trim())
  for (const part of values) {
    if (!(known as readonly string[]).includes(part))
      throw badRequest(`invalid_${name}`, `${name} must be one or more of ${known.join(', ')}, comma-separated`)
  }
  return values as T[]
}

function cursorOf(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url')
}

function cursorOffset(cursor: string): number {
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (!match) throw badRequest('invalid_cursor', 'cursor is not one this API gave')
  return Number(match[1])
}
