/**
 * One test per bug a mutation audit found the suite let through in the secrets service (issue 26): each fails
 * when its one-line bug is put back (docs/development.md, "Mutation testing", says how each was checked).
 */
import {Connection, Keypair} from '@solana/web3.js'
import {strict as assert} from 'node:assert'
import {fdatasyncSync} from 'node:fs'
import {join} from 'node:path'

import {TokenIssuer} from '../../../../src/lib/secrets/service/auth.js'
import {chainJobAuthority} from '../../../../src/lib/secrets/service/chain-authority.js'
import {ApiError} from '../../../../src/lib/http/api-error.js'
import {DEFAULT_LIMITS} from '../../../../src/lib/secrets/service/server.js'
import {type DataSync, openSqliteStorage} from '../../../../src/lib/secrets/service/sqlite.js'
import {call, newAddress, newWallet, signLogin, sqliteAdapter, startService, tempDir} from '../../../helpers/secrets.js'
import {ipfsCid} from '../../../helpers/standin.js'

const sealed = (name: string) => [{name, sealed: Buffer.from(`sealed-${name}`)}]

describe('secrets service: bugs the mutation audit found', () => {
  it('flushes the WAL before answering a durable write whose group also holds a refused write', async () => {
    const {dir, remove} = await tempDir()
    try {
      const events: string[] = []
      const dataSync: DataSync = (fd) => {
        events.push('sync')
        fdatasyncSync(fd)
      }
      const storage = openSqliteStorage(join(dir, 'secrets.db'), {dataSync})
      const quota = {...DEFAULT_LIMITS, secretsPerOwner: 1}
      // Both are queued in the same turn of the event loop, so they commit in one group; the second is over quota.
      const kept = storage.put('a', sealed('X'), quota).then(() => events.push('answered kept'))
      const refused = storage.put('b', [...sealed('Y'), ...sealed('Z')], quota)
      await assert.rejects(refused, /quota secretsPerOwner/)
      await kept
      assert.deepEqual(events, ['sync', 'answered kept'])
      await storage.close()
    } finally {
      await remove()
    }
  })

  it('stores nothing for a durable write refused after a failed flush', async () => {
    const {dir, remove} = await tempDir()
    try {
      let fail = true
      const storage = openSqliteStorage(join(dir, 'secrets.db'), {
        dataSync: (fd) => {
          if (fail) throw Object.assign(new Error('EIO: i/o error, fdatasync'), {code: 'EIO'})
          fdatasyncSync(fd)
        },
      })
      await assert.rejects(storage.put('owner', sealed('A'), DEFAULT_LIMITS), /cannot flush/)
      fail = false
      await assert.rejects(storage.put('owner', sealed('B'), DEFAULT_LIMITS), /cannot flush/)
      assert.deepEqual(
        (await storage.list('owner')).map((s) => s.name),
        ['A'],
        'B, refused, is not stored (A was committed before its flush failed)',
      )
      await storage.close()
    } finally {
      await remove()
    }
  })

  it('refuses a token it verified before once its exp is reached', async () => {
    const issuer = new TokenIssuer(Buffer.alloc(32, 7))
    const owner = newAddress()
    const now = 1_700_000_000
    const token = issuer.issue(owner, {kind: 'owner', owner}, now + 60, now)
    assert.deepEqual(await issuer.verify(`Bearer ${token}`, now), {kind: 'owner', owner})
    for (const at of [now + 60, now + 3600]) {
      await assert.rejects(
        issuer.verify(`Bearer ${token}`, at),
        (error: unknown) => error instanceof ApiError && error.status === 401 && error.code === 'token_expired',
        `at exp + ${at - now - 60} s`,
      )
    }
  })

  it("refuses a job's definition whose bytes are not those of its CID", async () => {
    const stored = Buffer.from(JSON.stringify({version: '0.1', ops: []}))
    const cid = await ipfsCid(stored)
    const answered = {bytes: Buffer.from(JSON.stringify({version: '0.1', ops: [], type: 'forged'}))}
    const authority = chainJobAuthority({
      // getDefinition reads only the content store: the RPC is never asked.
      connection: new Connection('http://127.0.0.1:9'),
      programId: Keypair.generate().publicKey,
      readContent: async () => answered.bytes,
      settings: {rpc: '--rpc', content: '--content'},
    })
    await assert.rejects(
      authority.getDefinition(cid),
      (error: unknown) =>
        error instanceof ApiError &&
        error.status === 502 &&
        error.code === 'definition_mismatch' &&
        error.message.includes(cid),
    )
    answered.bytes = stored
    assert.deepEqual(await authority.getDefinition(cid), {version: '0.1', ops: []})
  })

  it('refuses a form body that gives a login parameter twice, whichever value comes last', async () => {
    const s = await startService(sqliteAdapter)
    try {
      const wallet = newWallet()
      const params = signLogin(wallet)
      const form = (extra: string) =>
        `${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString()}&${extra}`
      const contentType = 'application/x-www-form-urlencoded'
      // The last value is the signer's own address: a parser where the last value wins would log this in.
      const repeated = `address=${newAddress()}&${form('').replace(/&$/, '')}`
      const answer = await call(s.url, 'POST', '/login', {rawBody: repeated, contentType})
      assert.equal(answer.status, 400, answer.text)
      assert.equal((answer.body as {error: {code: string}}).error.code, 'invalid_address')
      // Given once, the same parameters log in: the refusal is the repetition's doing.
      const once = await call(s.url, 'POST', '/login', {rawBody: form('').replace(/&$/, ''), contentType})
      assert.equal(once.status, 200, once.text)
    } finally {
      await s.stop()
    }
  })
})
