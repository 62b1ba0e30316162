/**
 * What the stable URL benchmarks share: a localnet (its deployment manager, one node running host processes) with
 * one SIMPLE deployment of one replica running a command of the benchmark's, once it answers at its job's URL and
 * at the deployment's stable URL; and the figures' helpers.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import {Agent, request} from 'node:http'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {Keypair, PublicKey} from '@solana/web3.js'

import {apiAuthHeaders} from '../src/lib/deployments/auth-header.js'
import type {Gateway} from '../src/lib/gateway/gateway.js'
import {startLocalnet} from '../src/lib/localnet/server/server.js'
import {ONE_MARKET} from '../test/helpers/markets.js'

/** The deployment running, and how to reach its replica. */
export interface OneReplica {
  gateway: Gateway
  /** `http://<deployment>.deploy.localhost:<gateway port>/` */
  stable: string
  /** The replica's job. */
  job: string
  /** The port the replica's command listens on, on 127.0.0.1. */
  port: number
  close(): Promise<void>
}

/**
 * Starts the localnet and the deployment of one replica running `cmd(port)` (a shell command) exposing `port`,
 * and resolves once `path` answers 200 at the job's URL and at the stable URL.
 */
export async function oneReplicaDeployment(
  name: string,
  cmd: (port: number) => string,
  path = '/',
): Promise<OneReplica> {
  const dir = mkdtempSync(join(tmpdir(), `gpunet-bench-${name}-`))
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
  const close = async () => {
    agent.destroy()
    await ln.close()
    rmSync(dir, {recursive: true, force: true})
  }
  try {
    const manager = ln.runtime.deploymentManager!
    const port = await freePort()
    const definition = {
      version: '0.1',
      type: 'container',
      ops: [{id: 'web', type: 'container/run', args: {image: 'unused', cmd: cmd(port), expose: port}}],
    }
    const created = (await managerCall(manager, owner, 'POST', '/api/deployments/create', {
      name,
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
    for (let tries = 0; ; tries++) {
      const {jobs} = (await managerCall(manager, owner, 'GET', `/api/deployments/${created.id}/jobs`)) as {
        jobs: {job: string; state: string}[]
      }
      const running = jobs.find((j) => j.state === 'RUNNING')
      const at = (url: string) => new URL(path, url).href
      if (running && (await get(agent, at(gateway.jobUrl(running.job)))).status === 200) {
        if ((await get(agent, at(stable))).status === 200) return {gateway, stable, job: running.job, port, close}
      }
      if (tries > 300) throw new Error('the replica never answered at both URLs')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  } catch (error) {
    await close()
    throw error
  }
}

/** Calls the manager at `base` as `owner` (its wallet headers); answers the parsed body, throws on a refusal. */
export async function managerCall(
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
export function get(agent: Agent, url: string): Promise<{status: number; ms: number}> {
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

/** The value at quantile `q` (0.5: the median) of `values`. */
export function quantile(values: number[], q: number): number {
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
