/**
 * Issue 37: what a deployment's stable URL costs over its replica's own URL on the localnet gateway. One localnet
 * (its deployment manager, one node running host processes), one deployment of one replica (busybox httpd), and
 * GETs alternating between `http://<deployment>.deploy.localhost:<port>/` and `http://<job>.node.localhost:<port>/`
 * over one keep-alive client, so both see the same machine at the same moments: median and p99 side by side, and
 * their ratio. The stable URL's extra work per request: the manager's rows of the deployment (SQLite), the node's
 * endpoint state, the draining flags, round robin.
 */
import {existsSync, mkdtempSync, rmSync} from 'node:fs'
import {Agent, request} from 'node:http'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {Keypair, PublicKey} from '@solana/web3.js'

import {apiAuthHeaders} from '../src/lib/deployments/auth-header.js'
import {startLocalnet} from '../src/lib/localnet/server/server.js'
import {ONE_MARKET} from '../test/helpers/markets.js'

const ROUNDS = 2000
const WARM_UP = 200

export default async function bench(): Promise<void> {
  if (!existsSync('/bin/busybox')) {
    process.stdout.write('busybox: not available here (the replica is its httpd), skipped\n')
    return
  }
  const dir = mkdtempSync(join(tmpdir(), 'gpunet-bench-stable-url-'))
  const owner = Keypair.generate()
  const ln = await startLocalnet({
    // One market of one node, instant simulated pulls: what was measured before the localnet had markets.
    markets: ONE_MARKET,
    dataDir: join(dir, 'localnet'),
    port: 0,
    wallet: owner.publicKey,
    node: {
      pullSimulation: {rateMbPerSecond: 50, scale: 1_000_000},
      gatewayPort: 0,
      runtime: 'host',
      healthIntervalMs: 100,
    },
  })
  const agent = new Agent({keepAlive: true, maxSockets: 1})
  try {
    const manager = ln.runtime.deploymentManager!
    const port = await freePort()
    const cmd = `echo served > index.html && exec /bin/busybox httpd -f -p 127.0.0.1:${port} -h .`
    const definition = {
      version: '0.1',
      type: 'container',
      ops: [{id: 'web', type: 'container/run', args: {image: 'unused', cmd, expose: port}}],
    }
    const created = (await managerCall(manager, owner, 'POST', '/api/deployments/create', {
      name: 'bench',
      market: ln.node.market.toBase58(),
      replicas: 1,
      timeout: 60,
      strategy: 'SIMPLE',
      job_definition: definition,
    })) as {id: string; vault: string}
    ln.node.fund(new PublicKey(created.vault), {lamports: 100_000_000n, tokens: 10_000_000n})
    await managerCall(manager, owner, 'POST', `/api/deployments/${created.id}/start`)
    const gateway = ln.agent!.gateway
    const stable = gateway.deploymentUrl(created.id)
    let job = ''
    for (let tries = 0; ; tries++) {
      const {jobs} = (await managerCall(manager, owner, 'GET', `/api/deployments/${created.id}/jobs`)) as {
        jobs: {job: string; state: string}[]
      }
      const running = jobs.find((j) => j.state === 'RUNNING')
      if (running && (await get(agent, gateway.jobUrl(running.job))).status === 200) {
        if ((await get(agent, stable)).status === 200) {
          job = running.job
          break
        }
      }
      if (tries > 300) throw new Error('the replica never answered at both URLs')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const cases = [
      {name: 'per-job URL', url: gateway.jobUrl(job), samples: [] as number[]},
      {name: 'stable URL', url: stable, samples: [] as number[]},
    ]
    for (let i = 0; i < WARM_UP; i++) for (const c of cases) await get(agent, c.url)
    for (let i = 0; i < ROUNDS; i++) {
      for (const c of cases) {
        const {status, ms} = await get(agent, c.url)
        if (status !== 200) throw new Error(`${c.name} answered ${status}`)
        c.samples.push(ms)
      }
    }
    const [perJob, viaStable] = cases.map((c) => ({median: quantile(c.samples, 0.5), p99: quantile(c.samples, 0.99)}))
    for (const [i, c] of cases.entries()) {
      const {median, p99} = [perJob!, viaStable!][i]!
      process.stdout.write(
        `  ${c.name.padEnd(14)} n=${ROUNDS}  median ${median.toFixed(3)} ms  p99 ${p99.toFixed(3)} ms\n`,
      )
    }
    process.stdout.write(
      `  stable / per-job: median ${(viaStable!.median / perJob!.median).toFixed(2)}x ` +
        `(+${(viaStable!.median - perJob!.median).toFixed(3)} ms), p99 ${(viaStable!.p99 / perJob!.p99).toFixed(2)}x\n`,
    )
  } finally {
    agent.destroy()
    await ln.close()
    rmSync(dir, {recursive: true, force: true})
  }
}

async function managerCall(
  base: string,
  owner: Keypair,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...apiAuthHeaders(owner),
      ...(body === undefined ? {} : {'content-type': 'application/json'}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return JSON.parse(text) as unknown
}

/** A GET through the gateway (127.0.0.1 with the URL's Host header): its status and wall time. */
function get(agent: Agent, url: string): Promise<{status: number; ms: number}> {
  const {host, port, pathname} = new URL(url)
  return new Promise((resolve, reject) => {
    const start = performance.now()
    const req = request({host: '127.0.0.1', port: Number(port), path: pathname, headers: {host}, agent}, (res) => {
      res.resume()
      res.on('end', () => resolve({status: res.statusCode ?? 0, ms: performance.now() - start}))
    })
    req.on('error', reject)
    req.end()
  })
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const {port} = server.address() as {port: number}
  await new Promise((resolve) => server.close(resolve))
  return port
}
