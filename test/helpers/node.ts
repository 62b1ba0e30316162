/** Posting jobs and watching them on a test localnet whose node agent runs them, as `job post/get` will. */
import {strict as assert} from 'node:assert'
import {request} from 'node:http'
import {setTimeout as sleep} from 'node:timers/promises'

import type {PublicKey} from '@solana/web3.js'

import {
  bytesToIpfsHash,
  decodeJobAccount,
  decodeRunAccount,
  JobState,
  RUN_ACCOUNT_DISCRIMINATOR,
} from '../../src/lib/market/index.js'
import {prepareUpload} from '../../src/lib/definition/network-form/prepare.js'
import type {FlowState, JobFailure} from '../../src/lib/results/flow-state.js'

/**
 * A node's flow state read flat, for assertions: each operation's streams joined, the gpunet members lifted. It
 * reads the raw document field by field, not through gpunet's reader, so a reader bug cannot hide a writer's.
 */
export interface JobResult {
  raw: FlowState
  job: string
  node: string
  status: FlowState['status']
  isolated: boolean
  notices: string[]
  error?: JobFailure
  ops: {id: string; status: string; exitCode: number | null; stdout: string; stderr: string; stopped: boolean}[]
}

/** The flat view of a flow state (see JobResult). */
export function flat(raw: FlowState): JobResult {
  const stream = (op: FlowState['opStates'][number], type: 'stdout' | 'stderr') =>
    op.logs
      .filter((entry) => entry.type === type)
      .map((entry) => entry.log)
      .join('')
  return {
    raw,
    job: raw.gpunet.job,
    node: raw.gpunet.node,
    status: raw.status,
    isolated: raw.gpunet.isolated,
    notices: raw.gpunet.notices,
    ...(raw.gpunet.failure ? {error: raw.gpunet.failure} : {}),
    ops: raw.opStates.map((op) => ({
      id: op.operationId,
      status: op.status,
      exitCode: op.exitCode,
      stdout: stream(op, 'stdout'),
      stderr: stream(op, 'stderr'),
      stopped: op.status === 'stopped' || op.diagnostics.reason.jobStopped || op.diagnostics.reason.jobExpired,
    })),
  }
}
import type {TestLocalnet} from './localnet.js'
import {listWithWallet} from './market.js'

/** A job state as `gpunet job get` shows it. */
export type Shown = 'QUEUED' | 'RUNNING' | 'COMPLETED' | 'STOPPED' | 'GONE'

/** The state `gpunet job get` shows: a queued job with a run account is running. */
export function state(t: TestLocalnet, job: PublicKey): Shown {
  const account = t.ln.node.chain.account(job)
  if (!account) return 'GONE'
  const decoded = decodeJobAccount(account.data)
  if (decoded.state === JobState.DONE) return 'COMPLETED'
  if (decoded.state === JobState.STOPPED) return 'STOPPED'
  return runOf(t, job) ? 'RUNNING' : 'QUEUED'
}

/** The run account of a running job. */
export function runOf(t: TestLocalnet, job: PublicKey): {address: PublicKey; payer: PublicKey; node: PublicKey} | null {
  const {chain} = t.ln.node
  const found = chain
    .programAccounts(chain.programId)
    .find(
      ({account}) =>
        RUN_ACCOUNT_DISCRIMINATOR.equals(account.data.subarray(0, 8)) && decodeRunAccount(account.data).job.equals(job),
    )
  return found ? {address: found.pubkey, ...decodeRunAccount(found.account.data)} : null
}

/**
 * Posts a definition as `job post` does: in the network's form (what the localnet's node reads, as the network's
 * nodes do) in the content store, `list` signed by the wallet.
 */
export async function post(t: TestLocalnet, ops: unknown[], timeout = 600n): Promise<PublicKey> {
  const prepared = await prepareUpload({version: '0.1', type: 'container', ops}, 'localnet')
  if (!prepared.ok) throw new Error(`not a definition the localnet runs: ${JSON.stringify(prepared.issues)}`)
  const {cid} = await t.ln.node.content.add(Buffer.from(prepared.upload.bytes))
  return listWithWallet(t, timeout, cid)
}

/** Posts a definition in the network's form as written (its newer members too), as `job post` does on localnet. */
export async function postNetwork(
  t: TestLocalnet,
  document: Record<string, unknown>,
  timeout = 600n,
): Promise<PublicKey> {
  const prepared = await prepareUpload(document, 'localnet')
  if (!prepared.ok) throw new Error(`not a definition the localnet runs: ${JSON.stringify(prepared.issues)}`)
  const {cid} = await t.ln.node.content.add(Buffer.from(prepared.upload.bytes))
  return listWithWallet(t, timeout, cid)
}

/** Polls until the job shows `wanted`; returns the states seen on the way. */
export async function waitFor(t: TestLocalnet, job: PublicKey, wanted: Shown, timeoutMs = 30_000): Promise<Shown[]> {
  const seen: Shown[] = []
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const now = state(t, job)
    if (seen.at(-1) !== now) seen.push(now)
    if (now === wanted) return seen
    if (Date.now() > deadline) throw new Error(`job stayed ${now} (seen ${seen.join(' -> ')})`)
    await sleep(25)
  }
}

/** The result document, read as `job get` does: the CID on the job account, fetched from the content store. */
export async function result(t: TestLocalnet, job: PublicKey): Promise<{text: string; doc: JobResult}> {
  const account = decodeJobAccount(t.ln.node.chain.account(job)!.data)
  const res = await fetch(`${t.ln.runtime.contentStoreUrl}/ipfs/${bytesToIpfsHash(account.ipfsResult)}`)
  assert.equal(res.status, 200)
  const text = await res.text()
  return {text, doc: flat(JSON.parse(text) as FlowState)}
}

/** A GET through the gateway with the job's Host header. */
export function viaGateway(t: TestLocalnet, job: PublicKey): Promise<{status: number; body: string}> {
  const port = Number(new URL(t.ln.runtime.gatewayUrl!).port)
  return gatewayGet(`http://${job.toBase58()}.node.localhost:${port}/`)
}

/** A GET of a job's service URL, sent to 127.0.0.1 with its Host header: no resolver for *.localhost needed. */
export function gatewayGet(url: string): Promise<{status: number; body: string}> {
  const {host, port, pathname} = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request({host: '127.0.0.1', port: Number(port), path: pathname, headers: {host}}, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
    })
    req.on('error', reject)
    req.end()
  })
}

/**
 * Collects the results the localnet's node records from now on (its `finished` events); the returned function
 * resolves with a job's result once the node has recorded it, whenever that was.
 */
export function watchFinished(t: TestLocalnet): (job: PublicKey) => Promise<JobResult> {
  const seen = new Map<string, JobResult>()
  const waiting = new Map<string, (doc: JobResult) => void>()
  t.ln.agent!.agent.on('finished', (job, raw) => {
    const doc = flat(raw)
    seen.set(job, doc)
    waiting.get(job)?.(doc)
  })
  return (job) => {
    const key = job.toBase58()
    const doc = seen.get(key)
    return doc ? Promise.resolve(doc) : new Promise((resolve) => waiting.set(key, resolve))
  }
}

/** The `resultView` member of `job get --json`, as the CLI tests read it. */
export interface ResultViewJson {
  format: string
  ops: {id: string; status: string; exitCode: number | null; logs: {stream: string | null; line: string}[]}[]
}

/** Each operation's id, exit code and stdout (its lines, each with its newline) from a `job get --json` view. */
export function stdoutOf(
  view: ResultViewJson | null | undefined,
): {id: string; exitCode: number | null; stdout: string}[] {
  return (view?.ops ?? []).map(({id, exitCode, logs}) => ({
    id,
    exitCode,
    stdout: logs
      .filter((entry) => entry.stream === 'stdout')
      .map((entry) => `${entry.line}\n`)
      .join(''),
  }))
}
