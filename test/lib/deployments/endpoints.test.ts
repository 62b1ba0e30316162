/**
 * A deployment's `endpoints` from the manager's rows (real SQLite): each running replica's URL per exposed port,
 * the stable URL of each port only where a gateway serves it, and what `deployment get` prints of them.
 */
import {strict as assert} from 'node:assert'
import {join} from 'node:path'

import {deploymentLines} from '../../../src/lib/deployments/client/client-render.js'
import type {Deployment} from '../../../src/lib/deployments/client/client.js'
import type {ManagerContext} from '../../../src/lib/deployments/context.js'
import {Draining} from '../../../src/lib/deployments/draining.js'
import type {ManagerGateway} from '../../../src/lib/deployments/context.js'
import {deploymentEndpoints} from '../../../src/lib/deployments/manager/endpoints.js'
import {deploymentObject} from '../../../src/lib/deployments/api/objects.js'
import {openSqliteDeploymentStore} from '../../../src/lib/deployments/store/sqlite-store.js'
import type {DeploymentStore} from '../../../src/lib/deployments/store/store.js'
import type {DeploymentRow, JobRow} from '../../../src/lib/deployments/types.js'
import type {MarketNetwork} from '../../../src/lib/market/connect.js'
import {serviceId} from '../../../src/lib/market/service-url.js'
import {removeDir, tempDir} from '../../helpers/files.js'

const ID = '8mjoSLcTSGfmxBANjB1dQ8Wv7ZGJdoVbMUVF6GUFXVhu'
const JOBS = ['Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb', 'Hq8ZsPcGfkGx1X8PqM9Mx2s8pGqK4WmD8V2r7ZqPYbLm']
const QUEUED = 'CuieVDEDtLo7FypA9SbLM9saXFdb1dsshEkyErMqkRQq'
const DEFINITION = {
  version: '0.1',
  type: 'container',
  ops: [{id: 'web', type: 'container/run', args: {image: 'x', expose: [8080, {port: 9000}]}}],
}

describe('deployment endpoints', () => {
  let dir: string
  let store: DeploymentStore
  let deployment: DeploymentRow
  let jobs: JobRow[]

  before(async () => {
    dir = tempDir()
    store = openSqliteDeploymentStore(join(dir, 'deployments.db'))
    const now = Date.now()
    deployment = {
      id: ID,
      name: 'svc',
      owner: JOBS[0]!,
      vault: QUEUED,
      market: QUEUED,
      status: 'RUNNING',
      replicas: 3,
      timeout: 10,
      strategy: 'SIMPLE',
      time_scale: 1,
      confidential: false,
      active_revision: 1,
      started_at: now,
      created_at: now,
      updated_at: now,
    }
    await store.createDeployment(
      deployment,
      {
        deployment: ID,
        revision: 1,
        ipfs_definition_hash: 'Qm',
        job_definition: JSON.stringify(DEFINITION),
        created_at: now,
      },
      {vault: QUEUED, owner: JOBS[0]!, sealed: Buffer.alloc(1), created_at: now},
    )
    const row = (job: string, state: JobRow['state']): JobRow => ({
      job,
      deployment: ID,
      tx: 'tx',
      market: QUEUED,
      revision: 1,
      run: job,
      state,
      time_start: state === 'RUNNING' ? 1 : 0,
      chain_timeout: 600,
      stop_requested: false,
      created_at: now,
      updated_at: now,
    })
    jobs = [row(JOBS[0]!, 'RUNNING'), row(JOBS[1]!, 'RUNNING'), row(QUEUED, 'QUEUED')]
  })
  after(async () => {
    await store.close()
    removeDir(dir)
  })

  const context = (network: 'devnet' | 'localnet', net: Partial<MarketNetwork>, gateway?: ManagerGateway) =>
    ({
      store,
      network,
      net: {networkHost: null, gatewayUrl: null, ...net} as MarketNetwork,
      now: Date.now,
      log: () => {},
      env: {},
      draining: new Draining(),
      ...(gateway ? {gateway} : {}),
    }) as unknown as ManagerContext

  it("on a network: each running replica's job URL per port, no stable one, no online it cannot see", async () => {
    const ctx = context('devnet', {networkHost: 'k8s.dev.nos.ci'})
    const endpoints = await deploymentEndpoints(ctx, deployment, jobs)
    assert.deepEqual(
      endpoints,
      JOBS.flatMap((job) =>
        [8080, 9000].map((port) => ({
          opId: 'web',
          port,
          url: `https://${serviceId(job, 0, port)}.node.k8s.dev.nos.ci`,
          job,
        })),
      ),
    )
    const lines = deploymentLines(deploymentObject(deployment, 3, endpoints) as unknown as Deployment).join('\n')
    assert.match(lines, /the network gives no stable URL per deployment; each replica has its own:/)
    assert.match(lines, new RegExp(`replica: +https://\\S+ \\(web:8080, job ${JOBS[0]}\\)`))
  })

  it('behind a gateway: the stable URL of each port first (online when a replica not draining is), then the replicas', async () => {
    const online = new Set([`${JOBS[1]}:8080`, `${JOBS[0]}:8080`])
    const gateway: ManagerGateway = {
      deploymentUrl: (d, port) => `http://${port === undefined ? d : `${d}-${port}`}.deploy.localhost:1234/`,
      online: (job, port) => online.has(`${job}:${port}`),
    }
    const ctx = context('localnet', {gatewayUrl: 'http://node.localhost:1234'}, gateway)
    await ctx.draining!.drain(JOBS[1]!)
    const endpoints = await deploymentEndpoints(ctx, deployment, jobs)
    assert.deepEqual(endpoints.slice(0, 2), [
      {opId: 'web', port: 8080, url: `http://${ID}.deploy.localhost:1234/`, online: true, stable: true},
      {opId: 'web', port: 9000, url: `http://${ID}-9000.deploy.localhost:1234/`, online: false, stable: true},
    ])
    assert.deepEqual(
      endpoints.slice(2).map((e) => [e.job, e.port, e.url, e.online]),
      [
        [JOBS[0], 8080, `http://${JOBS[0]}.node.localhost:1234/`, true],
        [JOBS[0], 9000, `http://${JOBS[0]}-9000.node.localhost:1234/`, false],
        // Draining: offline for new requests, whatever its checks say.
        [JOBS[1], 8080, `http://${JOBS[1]}.node.localhost:1234/`, false],
        [JOBS[1], 9000, `http://${JOBS[1]}-9000.node.localhost:1234/`, false],
      ],
    )
    const lines = deploymentLines(deploymentObject(deployment, 3, endpoints) as unknown as Deployment).join('\n')
    assert.match(lines, new RegExp(`stable URL: http://${ID}\\.deploy\\.localhost:1234/ \\(web:8080, online\\)`))
    assert.match(lines, /stable URL: \S+-9000\S+ \(web:9000, offline\)/)
    assert.doesNotMatch(lines, /gives no stable URL/)
  })
})
