/**
 * What the secrets service asks the chain about a job, answered from the localnet's own state: the node running
 * it (from its RunAccount), its poster and paid end, and its definition from the content store. The shape is the
 * secrets service's `JobAuthority`, so the localnet can hand it to that service when it runs it in-process.
 */
import {PublicKey} from '@solana/web3.js'

import {
  AccountDecodeError,
  decodeJobAccount,
  decodeRunAccount,
  JobState,
  RUN_ACCOUNT_DISCRIMINATOR,
} from '../market/accounts.js'
import {bytesToIpfsHash} from '../market/ipfs-hash.js'
import type {JobAuthority} from '../secrets/service/auth.js'
import type {Localnet} from './node.js'

/**
 * The job authority of a localnet: `node` is the node whose RunAccount points at the job (or that finished it),
 * `poster` the job's project, `endsAt` the run's start plus the job's timeout, `running` a queued job with a run.
 */
export function localnetJobAuthority(node: Localnet): JobAuthority {
  const {chain, content} = node
  const readJob = (address: string) => {
    let key: PublicKey
    try {
      key = new PublicKey(address)
    } catch {
      return null
    }
    const account = chain.account(key)
    if (!account || !account.owner.equals(chain.programId)) return null
    try {
      return {key, job: decodeJobAccount(account.data)}
    } catch (error) {
      if (error instanceof AccountDecodeError) return null
      throw error
    }
  }
  return {
    async getJob(address) {
      const found = readJob(address)
      if (!found) return null
      const {key, job} = found
      const run = chain
        .programAccounts(chain.programId)
        .filter(
          ({account}) =>
            RUN_ACCOUNT_DISCRIMINATOR.equals(account.data.subarray(0, 8)) &&
            key.equals(new PublicKey(account.data.subarray(8, 40))),
        )
        .map(({account}) => decodeRunAccount(account.data))[0]
      const running = run !== undefined && job.state === JobState.QUEUED
      const finishedBy = job.node.equals(PublicKey.default) ? null : job.node.toBase58()
      return {
        node: run ? run.node.toBase58() : finishedBy,
        poster: job.project.toBase58(),
        endsAt: Number((run ? run.time : job.timeStart) + job.timeout),
        running,
      }
    },
    async getDefinition(address) {
      const found = readJob(address)
      if (!found) throw new Error(`no job ${address}`)
      const cid = bytesToIpfsHash(found.job.ipfsJob)
      const bytes = content.get(cid)
      if (!bytes) throw new Error(`the content store does not hold ${cid}`)
      return JSON.parse(bytes.toString('utf8')) as unknown
    },
  }
}
