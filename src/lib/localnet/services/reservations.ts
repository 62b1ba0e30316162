/**
 * The network host manager's reservations lookups (nosana-kit's `reservations` group), answered from the
 * localnet's nodes: the GPU models with their VRAM and how many hosts are free (queued) or working, the options of
 * each requirement metric, and the queued hosts that meet a requirement set. The network's matching rule: a number
 * is a minimum, a string or boolean must match exactly, the GPU model is the `name` metric; an unknown metric or a
 * value of the wrong type is a 422. Pure functions over the nodes as they are now: the routes are in host-manager.ts.
 */
import {array, boolean, number, record, strictObject, string, union} from 'zod'

/** A host as the lookups see it: what it is, which market it serves, and whether it is free or working now. */
export interface HostView {
  address: string
  market: string
  gpu: string
  vram: number
  ram: number
  country: string
  /** Waiting in its market's node queue: a job posted there starts on it at once. */
  queued: boolean
  /** Running a job. */
  working: boolean
  /** The base USD price per hour of its market (before the network fee). */
  usdPerHour: number
}

/** A requirement set: metric key to a minimum (number) or an exact value (string, boolean). */
export type Requirements = Record<string, number | string | boolean>

/** A refusal in the network's shape: status and `{message}`. */
export class ReservationsError extends Error {
  constructor(
    readonly status: 422,
    message: string,
  ) {
    super(message)
  }
}

type MetricType = 'integer' | 'float' | 'text' | 'boolean' | 'json'

interface Metric {
  key: string
  type: MetricType
  match: 'exact' | 'minimum'
  read(host: HostView): number | string | boolean
}

/** The metrics the localnet's hosts report. */
const METRICS: readonly Metric[] = [
  {key: 'name', type: 'text', match: 'exact', read: (h) => h.gpu},
  {key: 'vram_gb', type: 'float', match: 'minimum', read: (h) => h.vram},
  {key: 'ram_gb', type: 'float', match: 'minimum', read: (h) => h.ram},
  {key: 'country', type: 'text', match: 'exact', read: (h) => h.country},
]

/** The metric keys the lookups take. */
export const METRIC_KEYS: readonly string[] = METRICS.map((m) => m.key)

const REQUIREMENTS = record(string(), union([number(), string(), boolean()]))
const OPTIONS_BODY = strictObject({metrics: array(string()).optional(), requirements: REQUIREMENTS.optional()})
const AVAILABLE_BODY = strictObject({requirements: REQUIREMENTS.optional()})

/** GET /reservations/gpus: each GPU model with its VRAM, host counts and the markets it serves. */
export function gpuModels(hosts: readonly HostView[]) {
  const models = new Map<
    string,
    {name: string; vramGb: number; nodes: number; available: number; working: number; markets: string[]}
  >()
  for (const host of hosts) {
    const model = models.get(host.gpu) ?? {name: host.gpu, vramGb: 0, nodes: 0, available: 0, working: 0, markets: []}
    model.vramGb = Math.max(model.vramGb, host.vram)
    model.nodes++
    if (host.queued) model.available++
    if (host.working) model.working++
    if (!model.markets.includes(host.market)) model.markets.push(host.market)
    models.set(host.gpu, model)
  }
  return {gpus: [...models.values()].sort((a, b) => a.name.localeCompare(b.name))}
}

/**
 * POST /reservations/requirements (and GET with `?metrics=`): the options of each metric over the queued or
 * working hosts that meet `requirements`.
 */
export function requirementOptions(hosts: readonly HostView[], body: unknown) {
  const request = parseBody(OPTIONS_BODY, body)
  const metrics = request.metrics ?? METRIC_KEYS
  for (const key of metrics) metricOf(key)
  checkRequirements(request.requirements ?? {})
  const scope = hosts.filter((h) => (h.queued || h.working) && meets(h, request.requirements ?? {}))
  return {
    nodes: scope.length,
    metrics: metrics.map((key) => {
      const metric = metricOf(key)
      const counts = new Map<number | string | boolean, number>()
      for (const host of scope) counts.set(metric.read(host), (counts.get(metric.read(host)) ?? 0) + 1)
      const values = [...counts].map(([value, nodes]) => ({value, nodes}))
      const numbers = values.map((v) => v.value).filter((v): v is number => typeof v === 'number')
      return {
        key: metric.key,
        group: null,
        type: metric.type,
        match: metric.match,
        perInstance: false,
        ...(numbers.length > 0 ? {min: Math.min(...numbers), max: Math.max(...numbers)} : {}),
        values,
      }
    }),
  }
}

/** POST /reservations/available: the queued hosts of every market that meet the requirements, and their price range. */
export function availableHosts(hosts: readonly HostView[], body: unknown) {
  const request = parseBody(AVAILABLE_BODY, body)
  checkRequirements(request.requirements ?? {})
  const found = hosts.filter((h) => h.queued && meets(h, request.requirements ?? {}))
  const prices = found.map((h) => h.usdPerHour)
  return {
    total: found.length,
    price: prices.length === 0 ? null : {minUsdPerHour: Math.min(...prices), maxUsdPerHour: Math.max(...prices)},
    nodes: found.map((h) => ({nodeAddress: h.address, market: h.market})),
  }
}

/** Refuses (422) a requirement of an unknown metric or of a value of another type than its metric's. */
function checkRequirements(requirements: Requirements): void {
  for (const [key, wanted] of Object.entries(requirements)) {
    const metric = metricOf(key)
    const numeric = metric.type === 'integer' || metric.type === 'float'
    const expected = numeric ? 'number' : metric.type === 'boolean' ? 'boolean' : 'string'
    if (typeof wanted !== expected) {
      throw new ReservationsError(422, `requirement ${key} must be a ${expected}, not a ${typeof wanted}`)
    }
  }
}

/** Whether a host meets every (checked) requirement: a number is a minimum, anything else must be equal. */
function meets(host: HostView, requirements: Requirements): boolean {
  return Object.entries(requirements).every(([key, wanted]) => {
    const metric = metricOf(key)
    const have = metric.read(host)
    return metric.match === 'minimum' ? (have as number) >= (wanted as number) : have === wanted
  })
}

function metricOf(key: string): Metric {
  const metric = METRICS.find((m) => m.key === key)
  if (!metric) throw new ReservationsError(422, `unknown metric ${key}: the metrics are ${METRIC_KEYS.join(', ')}`)
  return metric
}

function parseBody<T>(schema: {safeParse(v: unknown): {success: true; data: T} | {success: false}}, body: unknown): T {
  const parsed = schema.safeParse(body ?? {})
  if (!parsed.success) {
    throw new ReservationsError(
      422,
      'the body must be {"metrics"?: [metric keys], "requirements"?: {metric: number, string or boolean}}',
    )
  }
  return parsed.data
}
