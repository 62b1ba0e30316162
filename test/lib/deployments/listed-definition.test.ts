/**
 * The definition a manager lists its jobs with carries the deployment's `deployment_id` (and `meta.trigger`), as the
 * network's manager pins it: created and revised through the manager's own operations on a devnet stand-in RPC, the
 * bytes uploaded caught at the content store, and the LIST transaction sent naming exactly those bytes' CID.
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'

import {JobsClient} from '@nosana/kit'
import {Keypair, PublicKey} from '@solana/web3.js'

import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {MANAGER_TRIGGER} from '../../../src/lib/deployments/manager/listed-definition.js'
import {createDeployment} from '../../../src/lib/deployments/manager/operations.js'
import {createRevision} from '../../../src/lib/deployments/manager/revisions.js'
import type {CreateRequest} from '../../../src/lib/deployments/manager/validation.js'
import {runList} from '../../../src/lib/deployments/paying/paying.js'
import {vaultSeal} from '../../../src/lib/deployments/paying/vault-seal.js'
import type {DeploymentStore} from '../../../src/lib/deployments/store/store.js'
import {readNetworkDefinition} from '../../../src/lib/definition/network-form/read.js'
import {computeCidV0} from '../../../src/lib/ipfs/cid.js'
import {marketNetwork} from '../../../src/lib/market/connect.js'
import {NETWORK_PRESETS} from '../../../src/lib/market/index.js'
import {resolveSettings} from '../../../src/lib/settings/settings.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {seedNetwork} from '../../helpers/standin-network.js'
import {cidDigest, startStandinRpc, type StandinRpc} from '../../helpers/standin.js'

const DEVNET = NETWORK_PRESETS.devnet
const kit = JobsClient as unknown as {
  LIST_DISCRIMINATOR: Uint8Array
  getListInstructionDataDecoder(): {decode(data: Uint8Array): {ipfsJob: Uint8Array}}
}

const DEFINITION = {
  version: '0.1',
  type: 'container',
  ops: [{id: 'web', type: 'container/run', args: {image: 'docker.io/library/nginx:1.27', expose: 80}}],
}

describe('deployments: the definition a manager lists', function () {
  this.timeout(30_000)
  let rpc: StandinRpc
  let opened: OpenedStore
  let store: DeploymentStore
  let ctx: ManagerContext
  /** What the manager uploaded, by CID. */
  const uploads = new Map<string, Uint8Array>()

  beforeEach(async () => {
    rpc = await startStandinRpc()
    rpc.unitsConsumed = 20_000
    opened = await sqliteStores.open()
    store = opened.store
    uploads.clear()
    // The market the deployment names; its vault is funded once the manager has made it.
    seedNetwork(rpc, 'devnet', Keypair.generate().publicKey)
    const net = marketNetwork(
      resolveSettings({
        network: 'devnet',
        flags: {rpcUrl: rpc.url},
        env: {GPUNET_CONTENT_STORE_URL: 'http://127.0.0.1:1', XDG_CONFIG_HOME: '/nonexistent-gpunet-config'},
      }),
    )
    // The network's content client, its uploads caught here.
    const content = net.content()
    content.add = async (bytes: Uint8Array) => {
      const {cid} = computeCidV0(bytes)
      uploads.set(cid, bytes)
      return cid
    }
    ctx = {
      store,
      net: {...net, content: () => content},
      network: 'devnet',
      seal: vaultSeal(randomBytes(32)),
      now: () => 1_800_000_000_000,
      log: () => {},
      env: {},
    }
  })
  afterEach(async () => {
    await opened.cleanup()
    await rpc.close()
  })

  const request = (definition: Record<string, unknown>): CreateRequest => ({
    name: 'svc',
    market: DEVNET.market!.toBase58(),
    replicas: 1,
    timeout: 10,
    strategy: 'SIMPLE',
    job_definition: definition,
    confidential: false,
    autostart: false,
    time_scale: 1,
    schedule: null,
    rotation_time: null,
    startup_timeout: null,
    vault: undefined,
    new_vault: false,
    queue_placement: null,
    autoscale: null,
    budget: null,
  })

  /** The uploaded document of a revision, checked to be what its row names and the network's validator takes. */
  async function uploaded(deployment: string, revision: number): Promise<Record<string, unknown>> {
    const row = (await store.revision(deployment, revision))!
    const bytes = uploads.get(row.ipfs_definition_hash)
    assert.ok(bytes, `revision ${revision} was uploaded under its CID`)
    const document = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>
    assert.ok(readNetworkDefinition(document).ok, "the network's validator takes it")
    assert.deepEqual(JSON.parse(row.job_definition), document, 'the revision keeps the document its jobs run')
    return document
  }

  it('create and create-revision upload it with the deployment id as deployment_id; the LIST names those bytes', async () => {
    const created = await createDeployment(ctx, Keypair.generate().publicKey.toBase58(), request(DEFINITION))
    const first = await uploaded(created.id, 1)
    assert.equal(first.deployment_id, created.id)
    assert.deepEqual(first.meta, {trigger: MANAGER_TRIGGER})

    // A deployment_id of the user's own, and a trigger, are replaced as the network's manager replaces them.
    const revised = await createRevision(ctx, created, {...DEFINITION, deployment_id: 'mine', meta: {trigger: 'cli'}})
    const second = await uploaded(created.id, revised.active_revision)
    assert.equal(second.deployment_id, created.id)
    assert.equal((second.meta as {trigger: string}).trigger, MANAGER_TRIGGER)

    // The job listed for the active revision names the uploaded bytes.
    seedNetwork(rpc, 'devnet', new PublicKey(created.vault))
    const deployment = {...(await store.deployment(created.id))!, status: 'RUNNING' as const}
    const task = await store.addTask(
      {deployment: created.id, task: 'LIST', job: null, limit: 1, revision: revised.active_revision, due_at: 0},
      0,
    )
    await runList(ctx, deployment, task)
    const list = rpc.sent
      .flatMap((tx) => tx.instructions)
      .find((ix) => ix.programId.equals(DEVNET.programId) && ix.data.subarray(0, 8).equals(kit.LIST_DISCRIMINATOR))
    assert.ok(list, 'a LIST was sent')
    const {ipfsJob} = kit.getListInstructionDataDecoder().decode(list.data)
    const cid = (await store.revision(created.id, revised.active_revision))!.ipfs_definition_hash
    assert.deepEqual(Buffer.from(ipfsJob), Buffer.from(cidDigest(cid)))
  })
})
