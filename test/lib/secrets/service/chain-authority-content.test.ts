/**
 * How the chain authority answers for a job's definition when the content store misbehaves (issue 26, secrets
 * survivors: only the happy path and a mismatch were tested). Each refusal has its status, code and, for an
 * unavailable store, a Retry-After; the chain side is not involved.
 */
import {strict as assert} from 'node:assert'

import {Connection, Keypair} from '@solana/web3.js'

import {MAX_DEFINITION_BYTES} from '../../../../src/lib/definition/size.js'
import {GpunetError} from '../../../../src/lib/errors.js'
import {computeCidV0} from '../../../../src/lib/ipfs/cid.js'
import type {ChainAuthorityOptions} from '../../../../src/lib/secrets/service/chain-authority.js'
import {chainJobAuthority} from '../../../../src/lib/secrets/service/chain-authority.js'
import {ApiError} from '../../../../src/lib/http/api-error.js'

function authority(readContent: ChainAuthorityOptions['readContent']) {
  return chainJobAuthority({
    connection: new Connection('http://127.0.0.1:9'),
    programId: Keypair.generate().publicKey,
    readContent,
    settings: {rpc: '--rpc', content: '--ipfs-gateway'},
  })
}

async function refusal(
  promise: Promise<unknown>,
): Promise<{status: number; code: string; message: string; headers?: unknown}> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof ApiError, String(error))
    return error as never
  }
  assert.fail('expected a refusal')
}

describe('chain job authority: definitions from the content store', () => {
  const definition = Buffer.from(JSON.stringify({version: '0.1', type: 'container', ops: []}))
  const {cid} = computeCidV0(definition)

  it('answers the definition whose bytes hash to its CID', async () => {
    assert.deepEqual(await authority(async () => definition).getDefinition(cid), {
      version: '0.1',
      type: 'container',
      ops: [],
    })
  })

  it('is 404 for a CID the store does not have, 503 with Retry-After when the store fails', async () => {
    const missing = await refusal(authority(async () => null).getDefinition(cid))
    assert.deepEqual(
      [missing.status, missing.code, missing.message],
      [404, 'definition_not_found', `the content store has no definition ${cid}`],
    )
    const down = await refusal(
      authority(async () => {
        throw new Error('ECONNREFUSED')
      }).getDefinition(cid),
    )
    assert.deepEqual([down.status, down.code], [503, 'content_store_unavailable'])
    assert.equal(
      down.message,
      `the content store does not answer for the job's definition ${cid}; check --ipfs-gateway`,
    )
    assert.deepEqual(down.headers, {'retry-after': '5'})
  })

  it('is 403 for a definition past the size any job may post, whether the store stops reading or answers it', async () => {
    const message = `the job's definition ${cid} is larger than ${MAX_DEFINITION_BYTES} bytes, more than any job may post`
    const stopped = await refusal(
      authority(async () => {
        throw new GpunetError('content_too_large', 'past the limit')
      }).getDefinition(cid),
    )
    assert.deepEqual([stopped.status, stopped.code, stopped.message], [403, 'definition_too_large', message])
    const answered = await refusal(authority(async () => Buffer.alloc(MAX_DEFINITION_BYTES + 1)).getDefinition(cid))
    assert.deepEqual([answered.status, answered.code], [403, 'definition_too_large'])
    // At the size itself, the size is no refusal: the bytes are then checked against the CID.
    const atLimit = await refusal(authority(async () => Buffer.alloc(MAX_DEFINITION_BYTES)).getDefinition(cid))
    assert.equal(atLimit.code, 'definition_mismatch')
  })

  it('is 502 definition_mismatch when the content client itself refuses other bytes than the CID', async () => {
    const refused = await refusal(
      authority(async () => {
        throw new GpunetError('content_mismatch', 'the gateway answered other content')
      }).getDefinition(cid),
    )
    assert.deepEqual([refused.status, refused.code], [502, 'definition_mismatch'])
  })

  it('is 403 for bytes that hash to the CID but are not JSON', async () => {
    const text = Buffer.from('not json at all')
    const notJson = await refusal(authority(async () => text).getDefinition(computeCidV0(text).cid))
    assert.deepEqual([notJson.status, notJson.code], [403, 'invalid_definition'])
    assert.match(notJson.message, /is not JSON$/)
  })

  it('is 503 naming the RPC setting when the chain does not answer', async () => {
    const down = await refusal(authority(async () => definition).getJob(Keypair.generate().publicKey.toBase58()))
    assert.deepEqual([down.status, down.code], [503, 'chain_unavailable'])
    assert.equal(down.message, 'the Solana RPC node http://127.0.0.1:9 does not answer; check --rpc')
    assert.deepEqual(down.headers, {'retry-after': '5'})
  })
})
