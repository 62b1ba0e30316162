import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'

import {openPostgresStorage} from '../../../../src/lib/secrets/service/postgres.js'
import {createSecretsService, type SecretsService} from '../../../../src/lib/secrets/service/server.js'
import {call, forEachAdapter, login, newWallet, signLogin} from '../../../helpers/secrets.js'
import {postgresAdapter} from '../../../helpers/secrets-postgres.js'
import {DATABASE_URL_ENV} from '../../../support/env.js'

forEachAdapter(
  'secrets service instances sharing one database',
  () => {
    const schema = `gpunet_test_shared_${randomBytes(6).toString('hex')}`
    const masterKey = randomBytes(32)
    const services: SecretsService[] = []
    let urls: string[] = []

    before(async () => {
      const connectionString = process.env[DATABASE_URL_ENV] as string
      // Both start together, as a deployment would: creating the tables must not race.
      const storages = await Promise.all([0, 1].map(() => openPostgresStorage({connectionString, schema})))
      for (const storage of storages) services.push(createSecretsService({storage, masterKey}))
      urls = await Promise.all(services.map((s) => s.listen(0, '127.0.0.1')))
    })

    after(async () => {
      await Promise.all(services.map((s) => s.close()))
      const pg = (await import('pg')).default
      const admin = new pg.Client({connectionString: process.env[DATABASE_URL_ENV]})
      await admin.connect()
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await admin.end()
    })

    it('reads on one instance what was written on the other, with a token from either', async () => {
      const [a, b] = urls as [string, string]
      const wallet = newWallet()
      const token = await login(a, wallet)
      assert.equal((await call(a, 'POST', '/secrets', {token, params: {secrets: {SHARED: 'from a'}}})).status, 200)
      assert.deepEqual((await call(b, 'GET', '/secrets', {token})).body, {SHARED: 'from a'})
    })

    it('refuses on one instance a signature already used on the other', async () => {
      const [a, b] = urls as [string, string]
      const params = signLogin(newWallet())
      assert.equal((await call(a, 'POST', '/login', {params})).status, 200)
      const replay = await call(b, 'POST', '/login', {params})
      assert.equal(replay.status, 401)
      assert.equal((replay.body as {error: {code: string}}).error.code, 'replayed_signature')
    })
  },
  [postgresAdapter],
)
