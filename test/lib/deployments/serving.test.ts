/**
 * The one reading of whether a replica serves (serving.ts), which the job watch (readiness; the tunnel watch
 * without a stream) and the rollout share: on the localnet every port its revision exposes must be ONLINE in its node's API, asked with the vault's signature; a
 * port the node does not report, an unreachable or refusing node API, are not serving. Real SQLite, a real HTTP
 * server standing for the node's API.
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'
import bs58 from 'bs58'

import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {exposingDefinition, replicaServes} from '../../../src/lib/deployments/manager/serving.js'
import {openSqliteDeploymentStore} from '../../../src/lib/deployments/store/sqlite-store.js'
import type {DeploymentStore} from '../../../src/lib/deployments/store/store.js'
import type {DeploymentRow} from '../../../src/lib/deployments/types.js'
import {vaultSeal} from '../../../src/lib/deployments/paying/vault-seal.js'
import {verifySignature} from '../../../src/lib/keys/ed25519.js'
import {marketNetwork} from '../../../src/lib/market/connect.js'
import type {JobView} from '../../../src/lib/market/jobs/jobs.js'
import {localnetRewardsAccounts} from '../../../src/lib/localnet/rewards.js'
import {parseHeader} from '../../../src/lib/node-api/protocol.js'
import {resolveSettings} from '../../../src/lib/settings/settings.js'

import {startServer, type TestServer} from '../../helpers/http.js'
import {removeDir, tempDir} from '../../helpers/files.js'

const web = (expose: unknown) => ({id: 'web', type: 'container/run', args: {image: 'x', expose}})
const TWO_PORTS = {version: '0.1', type: 'container', ops: [web([8080, {port: 9000}])]}
const NO_PORT = {version: '0.1', type: 'container', ops: [web(undefined)]}

describe('deployments: whether a replica serves (serving.ts)', () => {
  let dir: string
  let store: DeploymentStore
  let nodeApi: TestServer
  let ctx: ManagerContext
  // What the stand-in node API answers next: a status code and each port's status.
  let answer: {status: number; urls: Record<string, {port: number; status: string}>}
  let authorization = ''
  const vault = Keypair.generate()
  const node = Keypair.generate().publicKey
  const job = Keypair.generate().publicKey
  const deployment = {id: 'D1', vault: vault.publicKey.toBase58()} as DeploymentRow
  const view = {address: job, run: {node, address: Keypair.generate().publicKey}} as unknown as JobView

  before(async () => {
    dir = tempDir()
    store = openSqliteDeploymentStore(join(dir, 'deployments.db'))
    const seal = vaultSeal(randomBytes(32))
    const now = Date.now()
    const row: DeploymentRow = {
      id: 'D1',
      name: 'svc',
      owner: vault.publicKey.toBase58(),
      vault: vault.publicKey.toBase58(),
      market: vault.publicKey.toBase58(),
      status: 'RUNNING',
      replicas: 1,
      timeout: 10,
      strategy: 'SIMPLE',
      time_scale: 1,
      confidential: false,
      active_revision: 1,
      started_at: now,
      created_at: now,
      updated_at: now,
    }
    const revision = (n: number, definition: unknown) => ({
      deployment: 'D1',
      revision: n,
      ipfs_definition_hash: 'Qm',
      job_definition: JSON.stringify(definition),
      created_at: now,
    })
    await store.createDeployment(row, revision(1, TWO_PORTS), {
      vault: row.vault,
      owner: row.owner,
      sealed: seal.seal(vault),
      created_at: now,
    })
    await store.addRevision(revision(2, NO_PORT), now)
    nodeApi = await startServer((req, res) => {
      authorization = String(req.headers.authorization ?? '')
      res.writeHead(answer.status, {'content-type': 'application/json'})
      res.end(JSON.stringify({urls: answer.urls}))
    })
    const settings = resolveSettings({
      network: 'localnet',
      env: {XDG_CONFIG_HOME: '/nonexistent-gpunet-config', GPUNET_NODE_API_URL: `${nodeApi.url}/{node}`},
    })
    const mint = Keypair.generate().publicKey
    const net = marketNetwork(settings, {
      rpcUrl: 'http://127.0.0.1:9',
      contentStoreUrl: 'http://127.0.0.1:9',
      gatewayUrl: null,
      programId: Keypair.generate().publicKey,
      mint,
      market: Keypair.generate().publicKey,
      node: null,
      rewards: localnetRewardsAccounts(mint),
    })
    ctx = {store, net, network: 'localnet', seal, now: Date.now, log: () => {}, env: {}}
  })
  after(async () => {
    await nodeApi.close()
    await store.close()
    removeDir(dir)
  })

  const online = (ports: Record<number, string>) => ({
    status: 200,
    urls: Object.fromEntries(Object.entries(ports).map(([port, status]) => [`web-${port}`, {port: +port, status}])),
  })

  it("a revision is watched only when it exposes a port; an unknown one isn't", async () => {
    assert.deepEqual(await exposingDefinition(ctx, 'D1', 1), TWO_PORTS)
    assert.equal(await exposingDefinition(ctx, 'D1', 2), null)
    assert.equal(await exposingDefinition(ctx, 'D1', 9), null)
  })

  it('serves when its node says every exposed port is ONLINE, asked with the vault’s signature naming node and job', async () => {
    answer = online({8080: 'ONLINE', 9000: 'ONLINE'})
    assert.equal(await replicaServes(ctx, deployment, view, TWO_PORTS), true)
    assert.ok(nodeApi.seen.includes(`GET /${node.toBase58()}/job/${job.toBase58()}/endpoints`), nodeApi.seen.join(' '))
    const header = parseHeader(authorization)
    assert.ok('message' in header, JSON.stringify(header))
    assert.match(header.message, new RegExp(job.toBase58()))
    assert.ok(verifySignature(bs58.decode(header.signature), Buffer.from(header.message), vault.publicKey.toBytes()))
  })

  it('does not serve when one exposed port is OFFLINE, or not reported at all', async () => {
    answer = online({8080: 'ONLINE', 9000: 'OFFLINE'})
    assert.equal(await replicaServes(ctx, deployment, view, TWO_PORTS), false)
    // The node reports only one port, ONLINE: the other is not known to serve.
    answer = online({8080: 'ONLINE'})
    assert.equal(await replicaServes(ctx, deployment, view, TWO_PORTS), false)
    answer = online({})
    assert.equal(await replicaServes(ctx, deployment, view, TWO_PORTS), false)
  })

  it('does not serve when the node API refuses or cannot be reached', async () => {
    answer = {...online({8080: 'ONLINE', 9000: 'ONLINE'}), status: 403}
    assert.equal(await replicaServes(ctx, deployment, view, TWO_PORTS), false)
    const far = {...ctx, net: {...ctx.net, nodeApiUrl: () => 'http://127.0.0.1:9'}}
    answer = online({8080: 'ONLINE', 9000: 'ONLINE'})
    assert.equal(await replicaServes(far, deployment, view, TWO_PORTS), false)
  })

  it('a definition that exposes nothing serves (nothing to check); off the localnet with no service host, nothing serves', async () => {
    assert.equal(await replicaServes(ctx, deployment, view, NO_PORT), true)
    const devnet = {...ctx, network: 'devnet' as const, net: {...ctx.net, networkHost: null}}
    assert.equal(await replicaServes(devnet, deployment, view, TWO_PORTS), false)
  })
})
