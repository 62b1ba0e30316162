/**
 * Job-scoped logins checked on a chain: the job account (owned by the jobs program), its RunAccounts and its
 * definition from the network's content store, its bytes checked against the CID. The localnet's in-process
 * service and `secrets serve --network` both use it; only where the RPC and the content come from differs.
 */
import {type Connection, PublicKey} from '@solana/web3.js'

import {MAX_DEFINITION_BYTES} from '../../definition/size.js'
import {GpunetError} from '../../errors.js'
import {ApiError, retryLater} from '../../http/api-error.js'
import {computeCidV0} from '../../ipfs/cid.js'
import {AccountDecodeError, decodeJobAccount, JobState} from '../../market/codec/accounts.js'
import {bytesToIpfsHash} from '../../market/codec/ipfs-hash.js'
import {findRuns} from '../../market/jobs/jobs.js'
import {rpcCall} from '../../market/rpc/rpc.js'
import type {JobAuthority, JobRecord} from './auth.js'

export interface ChainAuthorityOptions {
  connection: Connection
  programId: PublicKey
  /**
   * The bytes stored under a CID; null when the store answers that it has none. Throws when it does not answer,
   * and a GpunetError `content_too_large` as soon as the content passes `maxBytes` (it must not read on); gives up
   * when `signal` aborts.
   */
  readContent(cid: string, limits: {maxBytes: number; signal: AbortSignal}): Promise<Uint8Array | null>
  /** How long one read of a definition may take in all, a trickling gateway included (default 10 s). */
  contentDeadlineMs?: number
  /** How the operator sets the RPC URL and the content store, named in 503 answers. */
  settings: {rpc: string; content: string}
}

/** The RPC layer's errors for a node that failed or refused (market/rpc/rpc.ts): the chain is unavailable, for now. */
const RPC_FAILURES = new Set(['rpc_failed', 'rpc_rate_limited'])

/** The job authority of a network, reading its chain over JSON-RPC. */
export function chainJobAuthority(options: ChainAuthorityOptions): JobAuthority {
  const {connection, programId, settings} = options
  const chainDown = (code: string) =>
    retryLater(
      503,
      'chain_unavailable',
      code === 'rpc_rate_limited'
        ? `the Solana RPC node ${connection.rpcEndpoint} refuses requests (too many requests); check ${settings.rpc}`
        : `the Solana RPC node ${connection.rpcEndpoint} does not answer; check ${settings.rpc}`,
      5,
    )
  return {
    async getJob(address) {
      const key = new PublicKey(address)
      let record: JobRecord | null
      try {
        const info = await rpcCall(connection, () => connection.getAccountInfo(key))
        // Only the jobs program writes its accounts: anything else with a JobAccount's bytes is forged.
        if (!info || !info.owner.equals(programId)) return null
        const job = decodeJobAccount(info.data)
        const state = job.state === JobState.DONE ? 'done' : job.state === JobState.STOPPED ? 'stopped' : 'queued'
        const runs = state === 'done' ? [] : await findRuns(connection, programId, key)
        record = {
          poster: job.project.toBase58(),
          state,
          timeout: Number(job.timeout),
          runs: runs.map((run) => ({node: run.node.toBase58(), time: Number(run.time)})),
          definition: bytesToIpfsHash(job.ipfsJob),
        }
      } catch (error) {
        if (error instanceof AccountDecodeError) return null
        if (error instanceof GpunetError && RPC_FAILURES.has(error.code)) throw chainDown(error.code)
        throw error
      }
      return record
    },
    async getDefinition(cid) {
      let bytes: Uint8Array | null
      const mismatch = () =>
        new ApiError(502, 'definition_mismatch', `the content store answered other bytes than ${cid}`)
      const tooLarge = () =>
        new ApiError(
          403,
          'definition_too_large',
          `the job's definition ${cid} is larger than ${MAX_DEFINITION_BYTES} bytes, more than any job may post`,
        )
      try {
        const signal = AbortSignal.timeout(options.contentDeadlineMs ?? 10_000)
        bytes = await options.readContent(cid, {maxBytes: MAX_DEFINITION_BYTES, signal})
      } catch (error) {
        if (error instanceof GpunetError && error.code === 'content_too_large') throw tooLarge()
        // The content client checks the bytes against the CID itself: the same refusal as the check below.
        if (error instanceof GpunetError && error.code === 'content_mismatch') throw mismatch()
        throw retryLater(
          503,
          'content_store_unavailable',
          `the content store does not answer for the job's definition ${cid}; check ${settings.content}`,
          5,
        )
      }
      if (!bytes) throw new ApiError(404, 'definition_not_found', `the content store has no definition ${cid}`)
      if (bytes.byteLength > MAX_DEFINITION_BYTES) throw tooLarge()
      if (computeCidV0(bytes).cid !== cid) throw mismatch()
      try {
        return JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown
      } catch {
        throw new ApiError(403, 'invalid_definition', `the job's definition ${cid} is not JSON`)
      }
    },
  }
}
