/**
 * Where a job runs, read over plain JSON-RPC (json-rpc.ts) without web3.js: its status, its node while it runs,
 * and its poster. It is all `job exec`, `job shell` and `job stats` need of the chain before they talk to the
 * node, and `job exec` is answered before oclif and web3.js load (src/cli/fast-start.ts). Only these fields are
 * decoded (account-layout.ts); the status follows readJob's rule in jobs.ts.
 */
import bs58 from 'bs58'

import {type RawAccount, decodeChecked} from '../codec/account-check.js'
import {
  AccountDecodeError,
  JOB_ACCOUNT_DISCRIMINATOR,
  JOB_FIELD_OFFSETS,
  JobState,
  jobStatus,
  type JobStatus,
  RUN_ACCOUNT_DISCRIMINATOR,
  RUN_FIELD_OFFSETS,
} from '../codec/account-layout.js'
import {jsonRpc, rpcFailureAt} from '../rpc/json-rpc.js'

/** A job's status, the node that runs it (while it runs) and its poster (`job.project`), as base58 addresses. */
export interface JobPlacement {
  status: JobStatus
  node: string | null
  poster: string
}

/** Where the network's jobs program lives and how its JSON-RPC node is reached. */
export interface ChainEndpoint {
  rpcUrl: string
  programId: string
}

/** Reads where the job at `job` runs; exit 7 when it holds no job, exit 5 when the RPC node fails. */
export async function readJobPlacement(chain: ChainEndpoint, job: string): Promise<JobPlacement> {
  // Both reads at once: a job these commands are given usually runs, and then both are needed. The search's
  // failure waits for its await (or is dropped with its answer when the job has ended), so the job's comes first.
  const runNode = findRunNode(chain, job)
  runNode.catch(() => {})
  const fields = await readJobFields(chain, job)
  if (fields.state !== JobState.QUEUED) return {status: jobStatus(fields, null), node: null, poster: fields.poster}
  const node = await runNode
  if (!node) {
    // A node that finishes between the two reads closes the run: the job is read again before it is called
    // QUEUED, as readJob does.
    const now = await readJobFields(chain, job)
    return {status: jobStatus(now, null), node: null, poster: now.poster}
  }
  return {status: 'RUNNING', node, poster: fields.poster}
}

async function readJobFields(chain: ChainEndpoint, job: string): Promise<{state: number; poster: string}> {
  const result = await jsonRpc(chain.rpcUrl, 'getAccountInfo', [job, {encoding: 'base64', commitment: 'confirmed'}])
  const value = (result as {value?: unknown} | null)?.value
  const account = value === null ? null : rawAccount(value)
  if (account === undefined) throw rpcFailureAt(chain.rpcUrl, new Error('getAccountInfo answered no account'))
  return decodeChecked(account, chain.programId, job, 'job', (data) => {
    expectDiscriminator(data, JOB_ACCOUNT_DISCRIMINATOR, 'JobAccount')
    const end = JOB_FIELD_OFFSETS.state + 1
    if (data.length < end) throw new RangeError(`data too short: need ${end} bytes, have ${data.length}`)
    return {state: data[JOB_FIELD_OFFSETS.state]!, poster: keyAt(data, JOB_FIELD_OFFSETS.project)}
  })
}

/** The node of the job's oldest run (a stopped job may have been claimed several times), or null. */
async function findRunNode(chain: ChainEndpoint, job: string): Promise<string | null> {
  const filters = [
    {memcmp: {offset: 0, bytes: bs58.encode(RUN_ACCOUNT_DISCRIMINATOR)}},
    {memcmp: {offset: RUN_FIELD_OFFSETS.job, bytes: job}},
  ]
  const result = await jsonRpc(chain.rpcUrl, 'getProgramAccounts', [
    chain.programId,
    {encoding: 'base64', commitment: 'confirmed', filters},
  ])
  const runs: {node: string; time: bigint}[] = []
  for (const entry of Array.isArray(result) ? (result as unknown[]) : []) {
    // What the RPC node answers is checked again: an account cut short, or another job's run, is none of these.
    const account = rawAccount((entry as {account?: unknown} | null)?.account)
    if (!account || account.owner !== chain.programId) continue
    const {data} = account
    if (data.length < RUN_FIELD_OFFSETS.time + 8) continue
    if (!Buffer.from(data.subarray(0, 8)).equals(RUN_ACCOUNT_DISCRIMINATOR)) continue
    if (keyAt(data, RUN_FIELD_OFFSETS.job) !== job) continue
    const time = Buffer.from(data.buffer, data.byteOffset, data.byteLength).readBigInt64LE(RUN_FIELD_OFFSETS.time)
    runs.push({node: keyAt(data, RUN_FIELD_OFFSETS.node), time})
  }
  runs.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0))
  return runs[0]?.node ?? null
}

/** An account of a JSON-RPC answer (`{owner, data: [base64, "base64"]}`); undefined for any other shape. */
function rawAccount(value: unknown): RawAccount | undefined {
  const {owner, data} = (value ?? {}) as {owner?: unknown; data?: unknown}
  if (typeof owner !== 'string' || !Array.isArray(data) || typeof data[0] !== 'string' || data[1] !== 'base64') {
    return undefined
  }
  return {owner, data: Buffer.from(data[0], 'base64')}
}

function expectDiscriminator(data: Uint8Array, discriminator: Buffer, name: string): void {
  if (data.length < 8 || !Buffer.from(data.subarray(0, 8)).equals(discriminator)) {
    throw new AccountDecodeError(`not a ${name}: discriminator mismatch`)
  }
}

function keyAt(data: Uint8Array, offset: number): string {
  return bs58.encode(data.subarray(offset, offset + 32))
}
