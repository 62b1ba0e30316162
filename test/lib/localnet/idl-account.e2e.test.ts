/** The jobs program's Anchor IDL account (issue 21, item 2), laid out as Anchor writes it and the SDK reads it. */
import {strict as assert} from 'node:assert'
import {readFileSync} from 'node:fs'
import {inflateSync} from 'node:zlib'

import {PublicKey} from '@solana/web3.js'

import {accountDiscriminator} from '../../../src/lib/market/index.js'
import {startTestLocalnet} from '../../helpers/localnet.js'
import {removeDir} from '../../helpers/files.js'

/** The address the reference gives for the mainnet program id, which the localnet runs under. */
const IDL_ACCOUNT = new PublicKey('FzNGzex94JUVESW6kZGF8WDPH8mwSGLWPr4PewYJ3PVG')
const IDL = JSON.parse(
  readFileSync(new URL('../../../src/lib/localnet/jobs-program/idl.json', import.meta.url), 'utf8'),
)

describe('localnet: the jobs program IDL account', function () {
  this.timeout(30_000)

  it('is written on first start, at the reference address, in Anchor’s layout', async () => {
    const t = await startTestLocalnet()
    try {
      const account = await t.connection.getAccountInfo(IDL_ACCOUNT)
      assert.ok(account, 'the IDL account exists')
      assert.ok(account.owner.equals(t.programId))
      assert.deepEqual(account.data.subarray(0, 8), accountDiscriminator('IdlAccount'))
      const length = account.data.readUInt32LE(40)
      assert.equal(account.data.length, 44 + length)
      assert.deepEqual(JSON.parse(inflateSync(account.data.subarray(44, 44 + length)).toString('utf8')), IDL)
      assert.ok(account.lamports >= (await t.connection.getMinimumBalanceForRentExemption(account.data.length)))
    } finally {
      await t.close()
      removeDir(t.dataDir)
    }
  })

  it('is written again when an existing localnet starts without it', async () => {
    const first = await startTestLocalnet()
    first.ln.node.chain.setAccounts([[IDL_ACCOUNT, null]])
    assert.equal(await first.connection.getAccountInfo(IDL_ACCOUNT), null)
    await first.close()
    const again = await startTestLocalnet({dataDir: first.dataDir})
    try {
      assert.ok(await again.connection.getAccountInfo(IDL_ACCOUNT))
    } finally {
      await again.close()
      removeDir(first.dataDir)
    }
  })
})
