/**
 * What the secrets service's chain authority answers for a job in each state the jobs program stores, and for a
 * gateway that fails (issue 26, secrets survivors). A Stopped job may hold several claims; when one of them
 * finishes, the job is Done while the other claims' RunAccounts stay: a Done job has no run that counts.
 */
import {strict as assert} from 'node:assert'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'

import {Keypair} from '@solana/web3.js'

import {ContentClient} from '../../../../src/lib/ipfs/client.js'
import {NETWORK_PRESETS} from '../../../../src/lib/market/index.js'
import {openConnection} from '../../../../src/lib/market/rpc/rpc.js'
import {type ChainAuthorityOptions, chainJobAuthority} from '../../../../src/lib/secrets/service/chain-authority.js'
import {ApiError} from '../../../../src/lib/http/api-error.js'
import {JOB_CID} from '../../../helpers/market.js'
import {cidDigest, startStandinRpc, type StandinRpc} from '../../../helpers/standin.js'
import {putJobAccount, putRunAccount} from '../../../helpers/standin-network.js'

const programId = NETWORK_PRESETS.devnet.programId

describe('chain job authority: job states and a failing gateway', function () {
  this.timeout(30_000)
  let rpc: StandinRpc
  beforeEach(async () => {
    rpc = await startStandinRpc()
  })
  afterEach(() => rpc.close())

  const authority = (readContent: ChainAuthorityOptions['readContent'] = async () => null) =>
    chainJobAuthority({
      connection: openConnection(rpc.url),
      programId,
      readContent,
      settings: {rpc: '--rpc', content: '--ipfs-gateway'},
    })

  it('answers a Stopped job as stopped with its claims, and a Done job as done without the claims left over', async () => {
    const poster = Keypair.generate().publicKey
    const [first, second] = [Keypair.generate().publicKey, Keypair.generate().publicKey]
    const job = (state: number) => {
      const address = Keypair.generate().publicKey
      putJobAccount(rpc, 'devnet', address, {ipfsJob: cidDigest(JOB_CID), timeout: 900n, state, payer: poster})
      putRunAccount(rpc, 'devnet', address, first, first, 1_700_000_000)
      putRunAccount(rpc, 'devnet', address, second, second, 1_700_000_100)
      return address.toBase58()
    }
    const record = (state: string, runs: {node: string; time: number}[]) => ({
      poster: poster.toBase58(),
      state,
      timeout: 900,
      runs,
      definition: JOB_CID,
    })
    const claims = [
      {node: first.toBase58(), time: 1_700_000_000},
      {node: second.toBase58(), time: 1_700_000_100},
    ]
    assert.deepEqual(await authority().getJob(job(0)), record('queued', claims), 'Queued (0)')
    assert.deepEqual(await authority().getJob(job(3)), record('stopped', claims), 'Stopped (3)')
    assert.deepEqual(await authority().getJob(job(2)), record('done', []), 'Done (2)')
  })

  it('is 503 content_store_unavailable, not definition_too_large, when the gateway answers 500', async () => {
    const gateway = createServer((_request, response) => response.writeHead(500).end('internal error'))
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve))
    try {
      const content = new ContentClient(null, `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`)
      const failing = authority((cid, limits) => content.get(cid, limits))
      await assert.rejects(
        failing.getDefinition(JOB_CID),
        (error: unknown) =>
          error instanceof ApiError &&
          error.status === 503 &&
          error.code === 'content_store_unavailable' &&
          JSON.stringify(error.headers) === '{"retry-after":"5"}',
      )
    } finally {
      await new Promise((resolve) => gateway.close(resolve))
    }
  })
})
