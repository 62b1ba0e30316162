/**
 * The job-account owner check of the secrets service's chain authority, unit-tested on a stand-in RPC node with
 * accounts encoded by the official client (before issue 26 only an end-to-end test noticed it gone): a job
 * account's bytes prove nothing unless the jobs program owns the account.
 */
import {strict as assert} from 'node:assert'

import {Keypair} from '@solana/web3.js'

import {NETWORK_PRESETS} from '../../../../src/lib/market/index.js'
import {openConnection} from '../../../../src/lib/market/rpc/rpc.js'
import {chainJobAuthority} from '../../../../src/lib/secrets/service/chain-authority.js'
import {cidDigest, startStandinRpc, type StandinRpc} from '../../../helpers/standin.js'
import {putJobAccount, putRunAccount} from '../../../helpers/standin-network.js'
import {JOB_CID} from '../../../helpers/market.js'

describe('chain job authority: the job account owner', function () {
  this.timeout(30_000)
  let rpc: StandinRpc
  beforeEach(async () => {
    rpc = await startStandinRpc()
  })
  afterEach(() => rpc.close())

  it('knows a job the jobs program owns, and answers null for the same bytes under another owner', async () => {
    const programId = NETWORK_PRESETS.devnet.programId
    const authority = chainJobAuthority({
      connection: openConnection(rpc.url),
      programId,
      readContent: async () => null,
      settings: {rpc: '--rpc', content: '--ipfs-gateway'},
    })
    const poster = Keypair.generate().publicKey
    const node = Keypair.generate().publicKey
    const fields = {ipfsJob: cidDigest(JOB_CID), timeout: 900n, state: 0, payer: poster}

    const real = Keypair.generate().publicKey
    putJobAccount(rpc, 'devnet', real, fields)
    putRunAccount(rpc, 'devnet', real, node, node)
    assert.deepEqual(await authority.getJob(real.toBase58()), {
      poster: poster.toBase58(),
      state: 'queued',
      timeout: 900,
      runs: [{node: node.toBase58(), time: 1_700_000_000}],
      definition: JOB_CID,
    })

    const forged = Keypair.generate().publicKey
    putJobAccount(rpc, 'devnet', forged, fields, Keypair.generate().publicKey)
    putRunAccount(rpc, 'devnet', forged, node, node)
    assert.equal(await authority.getJob(forged.toBase58()), null)
  })
})
