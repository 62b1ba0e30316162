/**
 * The bounded fuzzer (fixed seed, a number of cases) extended to the manager's answers as the CLI reads them (issue
 * 61): a stand-in manager on 127.0.0.1 (a raw socket, so any bytes at all) answers the client's list, get, events
 * and jobs calls, and the event reading of `deployment events`, with seeded mutations of valid answers: wrong
 * types, missing members, huge strings within a bound, deep nesting, non-JSON, wrong content types, truncated
 * bodies, odd statuses and framing, stalls shortened through the client's answer timeout. Each call returns a
 * value of the client's declared types (which the commands' renderers and the `--json` printer then take) or throws
 * a GpunetError with a known code and a bounded message, never a bare TypeError, RangeError or SyntaxError, and
 * within a bound; what the renderers make of a value reaches a terminal without a control character.
 * Hand-written hostile answers (stalls, drips, deep JSON, event floods) are in hostile-manager.test.ts.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {type AddressInfo, createServer, type Server, type Socket} from 'node:net'

import {DeploymentClient} from '../../../src/lib/deployments/client/client.js'
import {deploymentLines, deploymentRows, eventLine, jobRows} from '../../../src/lib/deployments/client/client-render.js'
import {ExitCode, GpunetError} from '../../../src/lib/errors.js'
import {closeHttpAgents, configureHttp} from '../../../src/lib/http/client.js'
import {deploymentEvents} from '../../../src/lib/job/deployment-events.js'
import {printable} from '../../../src/lib/text/terminal-text.js'
import {prng} from '../../helpers/eventually.js'

const SEED = 0x61_00_61
const CASES = 400
/** The client's answer timeout here: a stall ends at it. */
const ANSWER_TIMEOUT_MS = 300
/** How long one call may take before it must have returned or thrown. */
const CALL_BOUND_MS = 3000
/** The most characters of an error's message and hint: the manager's words are cut to 500 each. */
const MAX_SHOWN = 2000

const ID = 'Dep1oyment1111111111111111111111111111111111'
const DEPLOYMENT = {
  id: ID,
  name: 'svc',
  vault: 'Vau1t11111111111111111111111111111111111111',
  market: 'Market1111111111111111111111111111111111111',
  owner: 'Owner11111111111111111111111111111111111111',
  status: 'RUNNING',
  replicas: 2,
  timeout: 10,
  strategy: 'SIMPLE',
  endpoints: [{opId: 'svc', port: 80, url: 'http://x.node.localhost'}],
  active_revision: 1,
  active_jobs: 2,
  schedule: '*/5 * * * *',
  created_at: '2026-11-27T10:00:00.000Z',
  updated_at: '2026-11-27T10:00:00.000Z',
}
const JOB = {
  job: 'Job1111111111111111111111111111111111111111',
  tx: 'tx1',
  deployment: ID,
  node: null,
  revision: 1,
  state: 'RUNNING',
  time_start: 1_700_000_000,
  created_at: '2026-11-27T10:00:00.000Z',
}
const EVENT = {
  category: 'Deployment',
  deploymentId: ID,
  type: 'STARTED',
  message: 'started',
  tx: null,
  created_at: '2026-11-27T10:00:00.000Z',
}

type Call = 'list' | 'get' | 'events' | 'jobs' | 'read-events'

/** What the stand-in manager does for one request. */
interface Answer {
  bytes: Buffer
  then: 'end' | 'reset' | 'stall'
  /** The code of the error document sent, when one was: a refusal may carry it. */
  code?: string
}

/** The codes the client itself gives a manager's answer it refuses or a status it maps. */
const CLIENT_CODES = new Set([
  'manager_unreachable',
  'manager_timeout',
  'manager_answer_invalid',
  'unauthorized',
  'not_found',
  'rate_limited',
  'manager_error',
])
const EXIT_CODES = new Set<number>(Object.values(ExitCode))

/** A seeded generator of a manager's hostile answers to each call. */
function manager(seed: number) {
  const random = prng(seed)
  const int = (n: number) => Math.floor(random() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T
  const chance = (p: number) => random() < p

  const KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '', '\u001b]0;title\u0007', 'k'.repeat(5000)]
  const deep = (depth: number): unknown => {
    let value: unknown = chance(0.5) ? 1 : 'x'
    for (let i = 0; i < depth; i++) value = chance(0.5) ? [value] : {[chance(0.6) ? 'a' : pick(KEYS)]: value}
    return value
  }
  /** A value of another type, or an edge of its own. */
  const odd = (): unknown =>
    pick([
      null,
      true,
      0,
      -1,
      1.5,
      1e308,
      -1e308,
      2 ** 53 + 1,
      '',
      'x'.repeat(int(20_000)),
      '\u001b[31mred\u0007\u0000',
      '\ud800',
      [],
      {},
      [1, 'a', null],
      {__proto__: 1},
      deep(1 + int(120)),
    ])

  /** The value with one member somewhere replaced, removed or added, a few times over. */
  const mutate = (value: unknown, budget = 1 + int(3)): unknown => {
    let out = structuredClone(value)
    for (let n = 0; n < budget; n++) {
      if (out === null || typeof out !== 'object' || chance(0.05)) {
        out = odd()
        continue
      }
      // Down a random path, then an edit there.
      let holder = out as Record<string, unknown>
      for (;;) {
        const keys = Object.keys(holder)
        if (keys.length === 0) break
        const key = pick(keys)
        const child = holder[key]
        if (child === null || typeof child !== 'object' || chance(0.4)) {
          const edit = int(4)
          if (edit === 0) delete holder[key]
          else if (edit === 1) holder[key] = odd()
          else if (edit === 2)
            Object.defineProperty(holder, pick(KEYS), {
              value: odd(),
              enumerable: true,
              configurable: true,
              writable: true,
            })
          else if (Array.isArray(holder)) holder.push(...Array.from({length: int(2000)}, () => holder[0]))
          else holder[key] = [child]
          break
        }
        holder = child as Record<string, unknown>
      }
    }
    return out
  }

  const valid = (call: Call): unknown => {
    const cursor = chance(0.2) ? pick(['next', 'x'.repeat(int(2000)), null]) : null
    if (call === 'list') return {deployments: [DEPLOYMENT, DEPLOYMENT], pagination: {cursor_next: cursor}}
    if (call === 'get') return DEPLOYMENT
    if (call === 'jobs')
      return chance(0.2) ? [JOB] : {jobs: [JOB, {...JOB, node: 'N1', state: 2}], pagination: {cursor_next: cursor}}
    return chance(0.2) ? [EVENT] : {events: [EVENT, {...EVENT, type: 'STOPPED'}], pagination: {cursor_next: cursor}}
  }

  /** One answer to `call`: a mutation of a valid document, framed and sent in a mutated way. */
  const answer = (call: Call): Answer => {
    let code: string | undefined
    let status = chance(0.8) ? 200 : pick([201, 204, 304, 400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 503])
    if (chance(0.05)) status = int(1000)
    let document: unknown = chance(0.3) ? valid(call) : mutate(valid(call))
    if (status >= 400 && chance(0.7)) {
      code = pick(['quota', 'Bad Code', 'x'.repeat(100), 'deployment_not_found', '\u001b[2J'])
      document = mutate({error: chance(0.5) ? {code, message: 'refused', hint: 'try'} : 'refused'}, chance(0.5) ? 0 : 1)
    }
    let body = Buffer.from(JSON.stringify(document) ?? 'undefined')
    const kind = int(20)
    if (kind === 0) body = Buffer.from('<html><body>502 Bad Gateway</body></html>')
    else if (kind === 1) body = body.subarray(0, int(body.length))
    else if (kind === 2) body = Buffer.from(Array.from({length: int(300)}, () => int(256)))
    else if (kind === 3) body = Buffer.from('['.repeat(int(100_000)))
    else if (kind === 4) body = Buffer.concat([body, Buffer.from(' trailing')])
    else if (kind === 5) body = Buffer.from(JSON.stringify({...(valid(call) as object), extra: deep(60 + int(60))}))
    const type = pick(['application/json', 'application/json', 'text/html', 'text/plain', '', 'application/json; x'])
    const head = [`HTTP/1.1 ${status} ${pick(['OK', 'X', ''])}`]
    if (type) head.push(`content-type: ${type}`)
    const framing = pick(['length', 'length', 'short', 'long', 'chunked', 'bad-chunks', 'none'])
    let payload = body
    if (framing === 'length') head.push(`content-length: ${body.length}`)
    else if (framing === 'short') head.push(`content-length: ${body.length + 1 + int(100)}`)
    else if (framing === 'long') head.push(`content-length: ${int(body.length + 1)}`)
    else if (framing === 'chunked' || framing === 'bad-chunks') {
      head.push('transfer-encoding: chunked')
      const size = framing === 'chunked' ? body.length.toString(16) : pick(['zz', '-1', 'ffffffffffffffff'])
      payload = Buffer.concat([Buffer.from(`${size}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')])
    }
    if (status === 429 && chance(0.5)) head.push(`retry-after: ${pick(['0', '1', 'soon', '99999999'])}`)
    head.push('connection: close')
    const bytes = Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), payload])
    const then = chance(0.04) ? 'stall' : chance(0.1) ? 'reset' : 'end'
    return {bytes, then, code}
  }

  return {answer, pick}
}

/** The call `path` of the client's request is. */
function callOf(path: string): Call {
  if (/\/events(\?|$)/.test(path)) return 'events'
  if (/\/jobs(\?|$)/.test(path)) return 'jobs'
  if (/^\/api\/deployments(\?|$)/.test(path)) return 'list'
  return 'get'
}

/** Fails unless the rendered lines, as a terminal is given them, hold no control character but tab and newline. */
function shown(lines: string[]): void {
  // eslint-disable-next-line no-control-regex -- control characters are what is looked for
  for (const line of lines) assert.doesNotMatch(printable(line, {isTTY: true}), /[\x00-\x08\x0b-\x1f\x7f-\x9f]/)
}

/** Fails unless `value` has the types the client declares for `call`'s answer (and the renderers take it). */
function checkValue(call: Call, value: unknown): void {
  const string = (v: unknown, what: string) => assert.equal(typeof v, 'string', what)
  const cursor = (p: {cursor_next: unknown}) =>
    assert.ok(p.cursor_next === null || typeof p.cursor_next === 'string', 'cursor_next')
  const deployment = (d: Record<string, unknown>) => {
    for (const key of ['id', 'name', 'vault', 'market', 'owner', 'status', 'strategy', 'created_at', 'updated_at'])
      string(d[key], key)
    assert.ok(Number.isInteger(d.replicas) && (d.replicas as number) >= 0, 'replicas')
    assert.ok(typeof d.timeout === 'number' && d.timeout >= 0, 'timeout')
    assert.ok(d.endpoints === undefined || Array.isArray(d.endpoints), 'endpoints')
    shown(deploymentLines(d as never))
  }
  if (call === 'get') deployment(value as Record<string, unknown>)
  if (call === 'list') {
    const page = value as {deployments: Record<string, unknown>[]; pagination: {cursor_next: unknown}}
    assert.ok(Array.isArray(page.deployments), 'deployments')
    page.deployments.forEach(deployment)
    cursor(page.pagination)
    shown(deploymentRows(page.deployments as never))
  }
  if (call === 'jobs') {
    const page = value as {jobs: Record<string, unknown>[]; pagination: {cursor_next: unknown}}
    assert.ok(Array.isArray(page.jobs), 'jobs')
    for (const job of page.jobs) {
      string(job.job, 'job')
      assert.ok(typeof job.state === 'string' || typeof job.state === 'number', 'state')
    }
    cursor(page.pagination)
    shown(jobRows(page.jobs as never))
  }
  if (call === 'events') {
    const page = value as {events: Record<string, unknown>[]; pagination: {cursor_next: unknown}}
    assert.ok(Array.isArray(page.events), 'events')
    for (const event of page.events) {
      for (const key of ['category', 'type', 'message', 'created_at']) string(event[key], key)
      shown([eventLine(event as never)])
    }
    cursor(page.pagination)
  }
  // What `--json` prints.
  JSON.stringify(value)
}

/** Resolves `promise`, or fails once `ms` has passed. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: neither returned nor threw within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, bound])
  } finally {
    clearTimeout(timer)
  }
}

describe("deployment client fuzzer: a manager's seeded hostile answers", function () {
  this.timeout(120_000)
  let server: Server
  let client: DeploymentClient
  const sockets = new Set<Socket>()
  let gen: ReturnType<typeof manager>
  /** The error codes the manager sent in this case's answers. */
  let sent = new Set<string>()
  /** An answer sent instead of the generator's, for the regression cases. */
  let fixed: Answer | undefined

  before(async () => {
    // undici's own retries would wait out 429s and 5xx: each case is one answer here.
    configureHttp({retry: {maxRetries: 0}})
    server = createServer((socket) => {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {})
      let seen = ''
      socket.on('data', (chunk: Buffer) => {
        if (seen.includes('\r\n\r\n')) return
        seen += chunk.toString('latin1')
        if (!seen.includes('\r\n\r\n')) return
        const path = seen.split(' ', 2)[1] ?? ''
        const answer = fixed ?? gen.answer(callOf(path))
        if (answer.code !== undefined) sent.add(answer.code)
        socket.write(answer.bytes)
        if (answer.then === 'end') socket.end()
        else if (answer.then === 'reset') socket.resetAndDestroy()
        // A stall: the client gives up at its answer timeout.
      })
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    client = new DeploymentClient(url, () => ({}), {answerTimeoutMs: ANSWER_TIMEOUT_MS, sleep: async () => {}})
  })

  after(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise((r) => server.close(r))
    await closeHttpAgents()
    configureHttp()
  })

  /** Runs one call: its value checked, or its error a GpunetError of a known code. */
  async function run(call: Call, i: number): Promise<'value' | string> {
    sent = new Set()
    const calls: Record<Call, () => Promise<unknown>> = {
      list: () => client.list(),
      get: () => client.get(ID),
      events: () => client.events(ID, {sort_order: 'asc', limit: 100}),
      jobs: () => client.jobs(ID),
      'read-events': () => deploymentEvents(client, ID, {follow: false, event: (e) => void eventLine(e)}),
    }
    try {
      const value = await within(calls[call](), CALL_BOUND_MS, `case ${i} (${call})`)
      if (call !== 'read-events') checkValue(call, value)
      return 'value'
    } catch (error) {
      if (error instanceof assert.AssertionError) throw error
      assert.ok(error instanceof GpunetError, `case ${i} (${call}): a bare ${String(error)}`)
      assert.ok(CLIENT_CODES.has(error.code) || sent.has(error.code), `case ${i} (${call}): code ${error.code}`)
      assert.ok(EXIT_CODES.has(error.exitCode), `case ${i} (${call}): exit ${error.exitCode}`)
      // What a person reads of it is bounded, whatever the manager sent.
      const shown = `${error.message} ${error.hint ?? ''}`
      assert.ok(shown.length <= MAX_SHOWN, `case ${i} (${call}): an error of ${shown.length} characters`)
      return error.code
    }
  }

  it(`reads ${CASES} seeded hostile answers to list, get, events and jobs (seed ${SEED.toString(16)})`, async () => {
    gen = manager(SEED)
    const seen = new Map<string, number>()
    const started = Date.now()
    for (let i = 0; i < CASES; i++) {
      const call = gen.pick(['list', 'get', 'events', 'jobs', 'read-events'] as const)
      const outcome = await run(call, i)
      seen.set(outcome, (seen.get(outcome) ?? 0) + 1)
    }
    assert.ok(Date.now() - started < 60_000, 'the run is bounded in time')
    // The run reached past the refusals too: some answers were read, some refused as invalid, some cut.
    for (const outcome of ['value', 'manager_answer_invalid', 'manager_unreachable'])
      assert.ok((seen.get(outcome) ?? 0) > 0, `too narrow a run: ${JSON.stringify([...seen])}`)
  })

  // Found by this fuzzer (seed 610061, case 243): a document nested past the bound under member names of 5000
  // characters made an error of 5255 characters, the path to the deep value quoting each name whole.
  it('cuts the member names an error quotes: a deep answer under long names (seed 610061, case 243)', async () => {
    let value: unknown = 1
    for (let i = 0; i < 100; i++) value = {['k'.repeat(5000)]: value}
    const body = JSON.stringify({deployments: [], pagination: {cursor_next: null}, extra: value})
    fixed = {
      bytes: Buffer.from(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      ),
      then: 'end',
    }
    try {
      assert.equal(await run('list', 0), 'manager_answer_invalid')
    } finally {
      fixed = undefined
    }
  })
})
