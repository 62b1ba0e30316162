/**
 * A deployment's `endpoints` from the manager's rows (real SQLite), each marked with its kind: the network's
 * deployment URL of each exposed port (computed here with @nosana/sdk's own functions), the stable URL of each port
 * only where a gateway serves it, each running replica's URL per exposed port; and what `deployment get` prints.
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

  /** The network's deployment URL of operation `op`, computed with @nosana/sdk's own functions. */
  async function sdkDeploymentLabel(op: string): Promise<string> {
    const sdk = await import('@nosana/sdk')
    return sdk.getExposeIdHash(sdk.createHash(`${ID}:${QUEUED}`, 45), op, 0)
  }

  it("on a network: the network's deployment URL per port first, then each running replica's, no stable one", async () => {
    const ctx = context('devnet', {networkHost: 'k8s.dev.nos.ci'})
    const endpoints = await deploymentEndpoints(ctx, deployment, jobs)
    // One domain for the operation, listed for each of its ports, as the network's manager lists it.
    const domain = `https://${await sdkDeploymentLabel('web')}.node.k8s.dev.nos.ci`
    assert.deepEqual(endpoints, [
      {opId: 'web', port: 8080, url: domain, kind: 'deployment'},
      {opId: 'web', port: 9000, url: domain, kind: 'deployment'},
      ...JOBS.flatMap((job) =>
        [8080, 9000].map((port) => ({
          opId: 'web',
          port,
          url: `https://${serviceId(job, 0, port)}.node.k8s.dev.nos.ci`,
          kind: 'replica',
          job,
        })),
      ),
    ])
    const lines = deploymentLines(deploymentObject(deployment, 3, endpoints) as unknown as Deployment)
    const text = lines.join('\n')
    assert.match(text, /^ {2}endpoints:$/m)
    assert.match(text, new RegExp(`^ {4}deployment {2}${domain.replace(/\./g, '\\.')} \\(web:8080\\)$`, 'm'))
    assert.match(text, new RegExp(`^ {4}replica {5}https://\\S+ \\(web:8080, job ${JOBS[0]}\\)$`, 'm'))
    assert.doesNotMatch(text, /stable/)
    assert.doesNotMatch(text, /no stable URL/)
  })

  it('a manager that knows no network host lists no URL it cannot build, of either kind', async () => {
    assert.deepEqual(await deploymentEndpoints(context('devnet', {}), deployment, jobs), [])
  })

  it("behind the localnet's gateway: the network's deployment URL on the gateway's host, then the stable URL of each port (online when a replica not draining is), then the replicas", async () => {
    const online = new Set([`${JOBS[1]}:8080`, `${JOBS[0]}:8080`])
    const gateway: ManagerGateway = {
      deploymentUrl: (d, port) => `http://${port === undefined ? d : `${d}-${port}`}.deploy.localhost:1234/`,
      online: (job, port) => online.has(`${job.job}:${port}`),
    }
    const ctx = context('localnet', {gatewayUrl: 'http://node.localhost:1234'}, gateway)
    await ctx.draining!.drain(JOBS[1]!)
    const endpoints = await deploymentEndpoints(ctx, deployment, jobs)
    const domain = `http://${await sdkDeploymentLabel('web')}.node.localhost:1234/`
    assert.deepEqual(endpoints.slice(0, 4), [
      // The network's domain knows nothing of draining: a replica passing its checks is a member.
      {opId: 'web', port: 8080, url: domain, kind: 'deployment', online: true},
      {opId: 'web', port: 9000, url: domain, kind: 'deployment', online: false},
      {opId: 'web', port: 8080, url: `http://${ID}.deploy.localhost:1234/`, kind: 'stable', online: true},
      {opId: 'web', port: 9000, url: `http://${ID}-9000.deploy.localhost:1234/`, kind: 'stable', online: false},
    ])
    assert.deepEqual(
      endpoints.slice(4).map((e) => [e.kind, e.job, e.port, e.url, e.online]),
      [
        ['replica', JOBS[0], 8080, `http://${JOBS[0]}.node.localhost:1234/`, true],
        ['replica', JOBS[0], 9000, `http://${JOBS[0]}-9000.node.localhost:1234/`, false],
        // Draining: offline for new requests, whatever its checks say.
        ['replica', JOBS[1], 8080, `http://${JOBS[1]}.node.localhost:1234/`, false],
        ['replica', JOBS[1], 9000, `http://${JOBS[1]}-9000.node.localhost:1234/`, false],
      ],
    )
    const lines = deploymentLines(deploymentObject(deployment, 3, endpoints) as unknown as Deployment).join('\n')
    assert.match(lines, new RegExp(`deployment {2}${domain.replace(/\./g, '\\.')} \\(web:8080, online\\)`))
    assert.match(lines, new RegExp(`stable {6}http://${ID}\\.deploy\\.localhost:1234/ \\(web:8080, online\\)`))
    assert.match(lines, /stable {6}\S+-9000\S+ \(web:9000, offline\)/)
  })

  it("deployment get reads endpoints without a kind as the manager meant them: the network's deployment URLs, an older gpunet's stable and replica ones", () => {
    const base = deploymentObject(deployment, 1) as unknown as Deployment
    const lines = deploymentLines({
      ...base,
      endpoints: [
        // As the network's manager sends them: its deployment URL, nothing more.
        {opId: 'web', port: 8080, url: 'https://network.node.k8s.prd.nos.ci'},
        {opId: 'web', port: 8080, url: 'http://old.deploy.localhost:1/', stable: true, online: true},
        {opId: 'web', port: 8080, url: 'http://job.node.localhost:1/', job: JOBS[0]},
        {opId: 'web', port: 8080, url: 'http://new.example/', kind: 'replica', job: JOBS[1], online: false},
      ],
    }).join('\n')
    assert.match(lines, /^ {4}deployment {2}https:\/\/network\.node\.k8s\.prd\.nos\.ci \(web:8080\)$/m)
    assert.match(lines, /^ {4}stable {6}http:\/\/old\.deploy\.localhost:1\/ \(web:8080, online\)$/m)
    assert.match(
      lines,
      new RegExp(`^ {4}replica {5}http://job\\.node\\.localhost:1/ \\(web:8080, job ${JOBS[0]}\\)$`, 'm'),
    )
    assert.match(
      lines,
      new RegExp(`^ {4}replica {5}http://new\\.example/ \\(web:8080, job ${JOBS[1]}, offline\\)$`, 'm'),
    )
  })
})
