/**
 * `gpunet deployment` run as users run it against a hostile stand-in manager on 127.0.0.1 (issue 61): a 100,000-deep
 * answer is exit 5 with a JSON error document, not exit 1 with a bare RangeError; a manager naming the owner's
 * own wallet as the vault gets no withdraw asked for, signed or sent (exit 5, withdraw_refused, why said).
 * The answer deadline, the flood of events and the withdraw check's signed transaction are in
 * test/lib/deployments/hostile-manager.test.ts, on shorter clocks than a CLI's.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'

import {runManagerCli} from '../../helpers/cli.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {startServer, type TestServer} from '../../helpers/http.js'

const ID = 'Dep1oyment1111111111111111111111111111111111'

describe('deployment commands against a hostile manager', () => {
  let dir: string
  let server: TestServer
  const owner = Keypair.generate()
  /** What the stand-in answers to GET /api/deployments/:id. */
  let deployment: () => string
  const plain = (vault: string) => ({
    id: ID,
    name: 'svc',
    vault,
    market: Keypair.generate().publicKey.toBase58(),
    owner: owner.publicKey.toBase58(),
    status: 'STOPPED',
    replicas: 1,
    timeout: 10,
    strategy: 'SIMPLE',
    endpoints: [],
    active_revision: 1,
    active_jobs: 0,
    created_at: '2026-11-27T10:00:00.000Z',
    updated_at: '2026-11-27T10:00:00.000Z',
  })
  const cli = (args: string[]) => runManagerCli(args, dir, server.url)

  before(async () => {
    dir = tempDir('gpunet-hostile-manager-')
    writeFileSync(join(dir, 'wallet.json'), JSON.stringify(Array.from(owner.secretKey)), {mode: 0o600})
    server = await startServer((req, res) => {
      res.writeHead(200, {'content-type': 'application/json'})
      // A withdraw transaction from the wallet to itself, as such a manager would send; the test asserts it is
      // never asked for.
      if (req.url?.endsWith('/withdraw')) return res.end(JSON.stringify({transaction: null}))
      res.end(deployment())
    })
  })
  after(async () => {
    await server.close()
    removeDir(dir)
  })
  beforeEach(() => {
    server.seen.length = 0
  })

  it('deployment get --json of a 100,000-deep answer is exit 5 (manager_answer_invalid), one JSON document', async () => {
    const depth = 100_000
    deployment = () =>
      `${JSON.stringify(plain(Keypair.generate().publicKey.toBase58())).slice(0, -1)},"extra":${'['.repeat(depth)}${']'.repeat(depth)}}`
    const result = await cli(['deployment', 'get', ID, '--json'])
    assert.equal(result.code, 5, `exit ${result.code}: ${result.stdout.slice(0, 300)} ${result.stderr.slice(0, 300)}`)
    const error = JSON.parse(result.stdout).error
    assert.equal(error.code, 'manager_answer_invalid')
    assert.match(error.message, /nests arrays and objects more than \d+ deep/)
    assert.doesNotMatch(result.stderr, /RangeError/)
  })

  it('deployment withdraw of a vault that is the wallet itself is exit 5 (withdraw_refused), nothing asked for', async () => {
    deployment = () => JSON.stringify(plain(owner.publicKey.toBase58()))
    const result = await cli(['deployment', 'withdraw', ID, '--yes', '--json'])
    assert.equal(result.code, 5, `exit ${result.code}: ${result.stdout.slice(0, 300)} ${result.stderr.slice(0, 300)}`)
    const error = JSON.parse(result.stdout).error
    assert.equal(error.code, 'withdraw_refused')
    assert.match(error.message, new RegExp(`names your own wallet ${owner.publicKey.toBase58()} as the vault`))
    assert.match(error.hint, /nothing was signed or sent/)
    assert.deepEqual(server.seen, [`GET /api/deployments/${ID}`])
  })
})
