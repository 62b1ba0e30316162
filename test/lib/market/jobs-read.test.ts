/** Reading a job while a node finishes it: the status never goes back to QUEUED (issue 44). */
import {strict as assert} from 'node:assert'

import {type AccountInfo, type Connection, Keypair, PublicKey} from '@solana/web3.js'

import {encodeJobAccount, encodeRunAccount, type JobAccount, JobState} from '../../../src/lib/market/codec/accounts.js'
import {readJob} from '../../../src/lib/market/jobs/jobs.js'

const PROGRAM = Keypair.generate().publicKey
const JOB = Keypair.generate().publicKey
const NODE = Keypair.generate().publicKey

const job = (state: number): JobAccount => ({
  ipfsJob: new Uint8Array(32),
  ipfsResult: new Uint8Array(32).fill(state === JobState.DONE ? 1 : 0),
  market: PublicKey.default,
  node: state === JobState.DONE ? NODE : PublicKey.default,
  payer: PublicKey.default,
  price: 1n,
  project: PublicKey.default,
  state,
  timeEnd: state === JobState.DONE ? 20n : 0n,
  timeStart: 10n,
  timeout: 600n,
})
const account = (data: Buffer): AccountInfo<Buffer> => ({data, owner: PROGRAM, executable: false, lamports: 1})

/**
 * The RPC answers of a chain on which the node finishes the job between gpunet's two reads: the first read of the
 * job sees it QUEUED (its run open), the search for its run comes after `finish` closed that run.
 */
function finishingBetweenReads(): {connection: Connection; reads: string[]} {
  const reads: string[] = []
  let finished = false
  const connection = {
    getMultipleAccountsInfo: async () => {
      reads.push('job')
      return [account(encodeJobAccount(job(JobState.QUEUED)))]
    },
    getProgramAccounts: async () => {
      reads.push('runs')
      finished = true
      return []
    },
    getAccountInfo: async () => {
      reads.push('job again')
      return account(encodeJobAccount(job(finished ? JobState.DONE : JobState.QUEUED)))
    },
  } as unknown as Connection
  return {connection, reads}
}

describe('readJob while its node finishes it', () => {
  it('reads the job again when its run is gone, and says COMPLETED, not QUEUED', async () => {
    const {connection, reads} = finishingBetweenReads()
    const view = await readJob(connection, PROGRAM, JOB)
    assert.equal(view.status, 'COMPLETED')
    assert.equal(view.run, null)
    assert.deepEqual(reads, ['job', 'runs', 'job again'])
  })

  it('still says RUNNING with its run, and QUEUED when the job is still queued on the second read', async () => {
    const run = encodeRunAccount({job: JOB, node: NODE, payer: PublicKey.default, state: 0, time: 10n})
    const running = {
      getMultipleAccountsInfo: async () => [account(encodeJobAccount(job(JobState.QUEUED)))],
      getProgramAccounts: async () => [{pubkey: Keypair.generate().publicKey, account: account(run)}],
    } as unknown as Connection
    assert.equal((await readJob(running, PROGRAM, JOB)).status, 'RUNNING')
    const queued = {
      getMultipleAccountsInfo: async () => [account(encodeJobAccount(job(JobState.QUEUED)))],
      getProgramAccounts: async () => [],
      getAccountInfo: async () => account(encodeJobAccount(job(JobState.QUEUED))),
    } as unknown as Connection
    assert.equal((await readJob(queued, PROGRAM, JOB)).status, 'QUEUED')
  })
})
