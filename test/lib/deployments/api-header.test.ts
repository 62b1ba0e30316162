/**
 * What an API key gets from `GET /api/deployments/:id/header` (issue 61): a node checks only the vault's signature
 * and the header's times, so a revocation reaches the nodes only through headers that expire. A key gets no
 * lasting header and not the network CLI's fixed message (its signature never changes, its time part is not
 * signed); the node-API message it gets is stamped with the manager's clock and refused 300 s later. Real manager
 * API and node API on 127.0.0.1, real SQLite, real vault signatures.
 */
import {strict as assert} from 'node:assert'
import {once} from 'node:events'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'
import type Database from 'better-sqlite3'

import {createDeploymentApi, type DeploymentApi} from '../../../src/lib/deployments/api/api.js'
import {type ApiAuth, createApiAuth} from '../../../src/lib/deployments/api/api-auth.js'
import {sqliteApiKeyRows} from '../../../src/lib/deployments/store/api-keys.js'
import {apiAuthHeaders} from '../../../src/lib/deployments/auth-header.js'
import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {openSqliteDeploymentStore} from '../../../src/lib/deployments/store/sqlite-store.js'
import type {DeploymentStore} from '../../../src/lib/deployments/store/store.js'
import {vaultSeal} from '../../../src/lib/deployments/paying/vault-seal.js'
import {FeedRegistry} from '../../../src/lib/node/api-server/feed.js'
import {NodeApi} from '../../../src/lib/node/api-server/server.js'
import {clientMessage, NETWORK_CLI_MESSAGE} from '../../../src/lib/node-api/protocol.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'
import {newWallet, tempDir} from '../../helpers/secrets.js'

const ID = '8mjoSLcTSGfmxBANjB1dQ8Wv7ZGJdoVbMUVF6GUFXVhu'
const JOB = Keypair.generate().publicKey.toBase58()
const NODE = Keypair.generate().publicKey.toBase58()
const START = Date.parse('2026-12-01T12:00:00Z')

describe('deployment header for an API key: no lasting credential, 300 s at most', function () {
  this.timeout(30_000)
  let remove: () => Promise<void>
  let store: DeploymentStore
  let keysDb: Database.Database
  let auth: ApiAuth
  let api: DeploymentApi
  let node: Server
  let nodeUrl: string
  let clock = START
  let stops = 0
  const owner = newWallet()
  const vault = Keypair.generate()

  before(async () => {
    let dir: string
    ;({dir, remove} = await tempDir())
    store = openSqliteDeploymentStore(join(dir, 'deployments.db'))
    const seal = vaultSeal(Buffer.alloc(32, 7))
    const address = vault.publicKey.toBase58()
    await store.createDeployment(
      {
        id: ID,
        name: 'svc',
        owner: owner.address,
        vault: address,
        market: NODE,
        status: 'RUNNING',
        replicas: 1,
        timeout: 60,
        strategy: 'SIMPLE',
        time_scale: 1,
        confidential: false,
        active_revision: 1,
        started_at: START,
        created_at: START,
        updated_at: START,
      },
      {deployment: ID, revision: 1, ipfs_definition_hash: 'Qm', job_definition: '{}', created_at: START},
      {vault: address, owner: owner.address, sealed: seal.seal(vault), created_at: START},
    )
    const list = await store.addTask(
      {deployment: ID, task: 'LIST', job: null, limit: 1, revision: 1, due_at: START},
      START,
    )
    const job = {
      job: JOB,
      deployment: ID,
      tx: 'tx',
      market: NODE,
      revision: 1,
      run: JOB,
      state: 'RUNNING' as const,
      time_start: 1,
      chain_timeout: 3600,
      time_end: 0,
      stop_requested: false,
      created_at: START,
      updated_at: START,
    }
    await store.recordListed(list, job, 'tx', START)
    keysDb = openSqlite(join(dir, 'keys.db'))
    auth = createApiAuth({rows: sqliteApiKeyRows(keysDb), now: () => clock})
    const ctx = {store, seal, network: 'localnet', now: () => clock, log: () => undefined} as unknown as ManagerContext
    api = createDeploymentApi(ctx, auth)
    await api.listen(0, '127.0.0.1')
    // The node of the job: its poster is the vault, its timeout an hour, its clock the test's.
    const feeds = new FeedRegistry()
    feeds.open(JOB)
    const nodeApi = new NodeApi(
      {
        address: NODE,
        feeds,
        jobTerms: async (job) => (job === JOB ? {poster: vault.publicKey.toBytes(), timeoutSeconds: 3600} : null),
        endpoints: () => null,
        stop: () => ++stops > 0,
        control: () => null,
      },
      {now: () => clock},
    )
    node = createServer((req, res) => nodeApi.serve(req, res))
    node.listen(0, '127.0.0.1')
    await once(node, 'listening')
    nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}`
  })
  after(async () => {
    await api.close()
    node.close()
    await store.close()
    keysDb.close()
    await remove()
  })
  beforeEach(() => {
    clock = START
  })

  async function header(credential: Record<string, string>, query: string) {
    const response = await fetch(`${api.url}/api/deployments/${ID}/header?${query}`, {headers: credential})
    return {status: response.status, body: (await response.json()) as {header?: string; error?: {code: string}}}
  }
  const stopAtNode = async (authorization: string) =>
    (await fetch(`${nodeUrl}/job/${JOB}/stop`, {method: 'POST', headers: {authorization}})).status

  it("refuses a key the lasting header and the network CLI's message, which the wallet still gets", async () => {
    const {key} = await auth.apiKeys.create(owner.address)
    const bearer = {authorization: `Bearer ${key}`}
    const lasting = await header(bearer, 'includeTime=false')
    assert.equal(lasting.status, 403, JSON.stringify(lasting.body))
    assert.equal(lasting.body.error?.code, 'lasting_header_refused')
    // With a time part the signature is the same: cut off, it is the lasting header the node takes for `stop`.
    const timed = await header(bearer, 'includeTime=true')
    assert.equal(timed.status, 403, JSON.stringify(timed.body))
    assert.equal(timed.body.error?.code, 'lasting_header_refused')
    const gpunet = encodeURIComponent(clientMessage('stop', NODE, JOB, clock))
    const forKey = await header(bearer, `message=${gpunet}&includeTime=false`)
    assert.equal(forKey.status, 403, JSON.stringify(forKey.body))

    // The owner's wallet signs for itself: it gets both, as the network's manager gives them.
    const wallet = await header(apiAuthHeaders(owner, {nowMs: clock}), 'includeTime=false')
    assert.equal(wallet.status, 200, JSON.stringify(wallet.body))
    assert.equal(wallet.body.header?.split(':')[0], NETWORK_CLI_MESSAGE)
    assert.equal(await stopAtNode(wallet.body.header!), 200)
  })

  it("a revoked key's header opens the node for 300 s after the manager signed it, and no longer", async () => {
    const made = await auth.apiKeys.create(owner.address)
    const bearer = {authorization: `Bearer ${made.key}`}
    // The caller's own time, 59 s ahead (the most a node lets pass), is replaced by the manager's.
    const asked = clientMessage('stop', NODE, JOB, clock + 59_000)
    const answer = await header(bearer, `message=${encodeURIComponent(asked)}&includeTime=true`)
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
    const signed = answer.body.header!
    assert.equal(signed.split(':')[0], clientMessage('stop', NODE, JOB, START))

    await auth.apiKeys.revoke(owner.address, made.id)
    assert.equal((await header(bearer, `message=${encodeURIComponent(asked)}`)).status, 401)
    clock = START + 299_000
    assert.equal(await stopAtNode(signed), 200)
    // Without the time part the message's own time still counts.
    assert.equal(await stopAtNode(signed.split(':').slice(0, 2).join(':')), 200)
    clock = START + 300_000
    assert.equal(await stopAtNode(signed), 401)
    assert.equal(await stopAtNode(signed.split(':').slice(0, 2).join(':')), 401)
  })
})
