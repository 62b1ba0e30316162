/**
 * `POST /api/deployments/vaults/:vault/withdraw` over HTTP, before a stand-in devnet holding the vault's SOL and
 * tokens: only the vault's owner gets its withdraw transaction, and only once nothing of its deployments may still
 * pay from it. The transaction sends everything to the caller, so a stranger answered one would empty the vault.
 */
import {strict as assert} from 'node:assert'
import {randomBytes} from 'node:crypto'
import {join} from 'node:path'

import {Keypair, PublicKey, SystemProgram} from '@solana/web3.js'
import type Database from 'better-sqlite3'

import {createDeploymentApi, type DeploymentApi} from '../../../src/lib/deployments/api/api.js'
import {createApiAuth} from '../../../src/lib/deployments/api/api-auth.js'
import {sqliteApiKeyRows} from '../../../src/lib/deployments/store/api-keys.js'
import {apiAuthHeaders} from '../../../src/lib/deployments/auth-header.js'
import {checkWithdraw} from '../../../src/lib/deployments/client/client-vault.js'
import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import type {DeploymentStatus} from '../../../src/lib/deployments/types.js'
import {vaultSeal} from '../../../src/lib/deployments/paying/vault-seal.js'
import {marketNetwork} from '../../../src/lib/market/connect.js'
import {NETWORK_PRESETS} from '../../../src/lib/market/index.js'
import {resolveSettings} from '../../../src/lib/settings/settings.js'
import {openSqlite} from '../../../src/lib/sqlite/open.js'
import {type OpenedStore, sqliteStores} from '../../helpers/deployment-stores.js'
import {newWallet, tempDir} from '../../helpers/secrets.js'
import {fundWallet, startStandinRpc, type StandinRpc} from '../../helpers/standin.js'

const DEVNET = NETWORK_PRESETS.devnet
const T0 = 1_800_000_000_000

describe('deployment API: withdrawing a vault', function () {
  this.timeout(20_000)
  let rpc: StandinRpc
  let opened: OpenedStore
  let dir: string
  let remove: () => Promise<void>
  let db: Database.Database
  let api: DeploymentApi
  let ctx: ManagerContext
  const owner = newWallet()
  const stranger = newWallet()

  beforeEach(async () => {
    rpc = await startStandinRpc()
    opened = await sqliteStores.open()
    ;({dir, remove} = await tempDir())
    db = openSqlite(join(dir, 'keys.db'))
    const net = marketNetwork(
      resolveSettings({
        network: 'devnet',
        flags: {rpcUrl: rpc.url},
        env: {GPUNET_CONTENT_STORE_URL: 'http://127.0.0.1:1', XDG_CONFIG_HOME: '/nonexistent-gpunet-config'},
      }),
    )
    ctx = {
      store: opened.store,
      net,
      network: 'devnet',
      seal: vaultSeal(randomBytes(32)),
      now: () => T0,
      log: () => {},
      env: {},
    }
    api = createDeploymentApi(ctx, createApiAuth({rows: sqliteApiKeyRows(db), now: () => Date.now()}))
    await api.listen(0, '127.0.0.1')
  })
  afterEach(async () => {
    await api.close()
    db.close()
    await opened.cleanup()
    await remove()
    await rpc.close()
  })

  /** A vault of `owner` holding SOL and tokens on the chain; with `status`, a deployment paying from it. */
  async function vaultOf(status?: DeploymentStatus): Promise<string> {
    const keypair = Keypair.generate()
    const vault = keypair.publicKey.toBase58()
    const row = {vault, owner: owner.address, sealed: ctx.seal.seal(keypair), created_at: T0}
    const id = `dep-${randomBytes(4).toString('hex')}`
    if (status === undefined) await ctx.store.addVault(row)
    else
      await ctx.store.createDeployment(
        {
          id,
          name: 'svc',
          owner: owner.address,
          vault,
          market: DEVNET.market!.toBase58(),
          status,
          replicas: 1,
          timeout: 10,
          strategy: 'SIMPLE',
          time_scale: 1,
          confidential: false,
          active_revision: 1,
          started_at: T0,
          created_at: T0,
          updated_at: T0,
        },
        {deployment: id, revision: 1, ipfs_definition_hash: 'Qm1', job_definition: '{}', created_at: T0},
        row,
      )
    fundWallet(rpc, keypair.publicKey, DEVNET.mint!, 7_000_000, 3_000_000n)
    return vault
  }

  async function withdraw(who: ReturnType<typeof newWallet>, vault: string) {
    const response = await fetch(`${api.url}/api/deployments/vaults/${vault}/withdraw`, {
      method: 'POST',
      headers: {...apiAuthHeaders(who), 'content-type': 'application/json'},
      body: '{}',
    })
    return {
      status: response.status,
      body: (await response.json()) as {transaction?: string; error?: {code: string; message: string}},
    }
  }

  it("answers the owner a transaction that sends the vault's SOL and tokens to the owner", async () => {
    const vault = await vaultOf()
    const answer = await withdraw(owner, vault)
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
    const {plan} = checkWithdraw(
      answer.body.transaction!,
      new PublicKey(owner.address),
      new PublicKey(vault),
      DEVNET.mint!,
      0n,
    )
    assert.deepEqual({lamports: plan.lamports, tokens: plan.tokens}, {lamports: 7_000_000n, tokens: 3_000_000n})
  })

  it("refuses a stranger another owner's vault, 404 as for a vault that does not exist, without reading it", async () => {
    for (const status of [undefined, 'STOPPED', 'RUNNING'] as const) {
      const vault = await vaultOf(status)
      rpc.requests.length = 0
      const answer = await withdraw(stranger, vault)
      assert.deepEqual([answer.status, answer.body.error?.code], [404, 'not_found'], `vault of a ${status} deployment`)
      assert.equal(answer.body.transaction, undefined)
      assert.match(answer.body.error!.message, new RegExp(`vault ${vault}`))
      assert.deepEqual(rpc.requests, [], 'nothing of the vault is read for a stranger')
    }
    const nowhere = await withdraw(stranger, Keypair.generate().publicKey.toBase58())
    assert.equal(nowhere.status, 404)
  })

  it('refuses the owner while a deployment may still pay from the vault, and takes a stopped one', async () => {
    for (const status of ['RUNNING', 'STARTING', 'STOPPING'] as const) {
      const answer = await withdraw(owner, await vaultOf(status))
      assert.equal(answer.status, 409, `${status}: ${JSON.stringify(answer.body)}`)
      assert.match(JSON.stringify(answer.body), new RegExp(`is ${status} and pays from this vault`))
    }
    for (const status of ['STOPPED', 'ERROR', 'INSUFFICIENT_FUNDS'] as const) {
      const answer = await withdraw(owner, await vaultOf(status))
      assert.equal(answer.status, 200, `${status}: ${JSON.stringify(answer.body)}`)
    }
  })

  it('refuses the owner a vault that holds nothing', async () => {
    const keypair = Keypair.generate()
    const vault = keypair.publicKey.toBase58()
    await ctx.store.addVault({vault, owner: owner.address, sealed: ctx.seal.seal(keypair), created_at: T0})
    rpc.set(keypair.publicKey, {owner: SystemProgram.programId, lamports: 0, data: Buffer.alloc(0)})
    const answer = await withdraw(owner, vault)
    assert.equal(answer.status, 409)
    assert.match(JSON.stringify(answer.body), /holds nothing to withdraw/)
  })
})
