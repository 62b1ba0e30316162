import {strict as assert} from 'node:assert'
import {join} from 'node:path'

import {isGpunetError} from '../../../src/lib/errors.js'
import {SecretsClient} from '../../../src/lib/secrets/client.js'
import {TokenCache} from '../../../src/lib/secrets/token-cache.js'
import {MemoryAuthority, newAddress, newWallet, sqliteAdapter, startService, tempDir} from '../../helpers/secrets.js'

describe('SecretsClient', () => {
  const authority = new MemoryAuthority()
  let s: Awaited<ReturnType<typeof startService>>
  let dir: {dir: string; remove: () => Promise<void>}
  before(async () => {
    s = await startService(sqliteAdapter, {authority})
    dir = await tempDir()
  })
  after(async () => {
    await s.stop()
    await dir.remove()
  })

  const logins = () => s.lines.filter((l) => l.includes('POST /login')).length

  it('sets, lists and deletes, logging in once per cached token', async () => {
    const cache = new TokenCache(join(dir.dir, 'tokens.json'))
    const wallet = newWallet()
    const before = logins()
    await new SecretsClient({url: s.url, wallet, cache}).set({A: '1', B: '2'})
    const again = new SecretsClient({url: `${s.url}/`, wallet, cache})
    assert.deepEqual(await again.list(), {A: '1', B: '2'})
    await again.delete('A')
    assert.deepEqual(await again.list(), {B: '2'})
    assert.equal(logins(), before + 1)
  })

  it('retries a login refused as a replay in the next second', async () => {
    const wallet = newWallet()
    const first = new SecretsClient({url: s.url, wallet, cache: null})
    const second = new SecretsClient({url: s.url, wallet, cache: null})
    const [a, b] = await Promise.all([first.login(), second.login()])
    assert.notEqual(a, b)
  })

  it('reads the poster secrets a job refers to, as the node running it', async () => {
    const poster = newWallet()
    const node = newWallet()
    const job = newAddress()
    await new SecretsClient({url: s.url, wallet: poster, cache: null}).set({USED: 'u', UNUSED: 'x'})
    authority.run(job, {
      node: node.address,
      poster: poster.address,
      definition: {ops: [{args: {cmd: ['run', '--key', '%%secrets.USED%%']}}]},
    })
    const client = new SecretsClient({url: s.url, wallet: node, job, cache: null})
    assert.deepEqual(await client.list(), {USED: 'u'})
    await assert.rejects(
      client.set({USED: 'changed'}),
      (error) => isGpunetError(error) && error.exitCode === 6 && error.code === 'read_only_token',
    )
  })

  it('maps refusals to exit codes: 7 unknown name or job, 3 bad input', async () => {
    const client = new SecretsClient({url: s.url, wallet: newWallet(), cache: null})
    await assert.rejects(client.delete('MISSING'), (error) => isGpunetError(error) && error.exitCode === 7)
    await assert.rejects(client.set({A: 'x'.repeat(70_000)}), (error) => isGpunetError(error) && error.exitCode === 3)
    const stranger = new SecretsClient({url: s.url, wallet: newWallet(), job: newAddress(), cache: null})
    await assert.rejects(
      stranger.list(),
      (error) => isGpunetError(error) && error.exitCode === 7 && error.code === 'unknown_job',
    )
  })
})
