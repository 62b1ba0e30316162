/**
 * The localnet of the failover tests (docs/jobs.md, "Failover"): started from a markets file whose first market is
 * `localnet`, with that market's node gone (`localnet node leave`: no free node there), the queue timeout sped up
 * 30 times (queueTimeoutScale, localnet only) and a job the host runtime runs at once.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {type CliResult, runCli} from './cli.js'
import type {CliSandbox} from './cli-localnet.js'

/** What a failover test works with: its environment, the job's file, each market by slug, the waiting market's node. */
export interface FailoverLocalnet {
  env: NodeJS.ProcessEnv
  file: string
  bySlug: Map<string, string>
  waitingNode: string
  run(args: string[], extra?: NodeJS.ProcessEnv): Promise<CliResult>
}

/** Starts the sandbox's localnet with `marketsYaml` and sends the `localnet` market's node away. */
export async function startFailoverLocalnet(box: CliSandbox, marketsYaml: string): Promise<FailoverLocalnet> {
  const markets = join(box.dir, 'failover-markets.yaml')
  writeFileSync(markets, marketsYaml)
  const env = {...box.env, GPUNET_LOCALNET_MARKETS: markets, GPUNET_QUEUE_TIMEOUT_SCALE: '30'}
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}) => runCli(args, {env: {...env, ...extra}})
  const file = join(box.dir, 'job.json')
  const op = {id: 'hello', type: 'container/run', args: {image: 'docker.io/library/ubuntu:24.04', cmd: ['echo', 'ran']}}
  writeFileSync(file, JSON.stringify({version: '0.1', type: 'container', ops: [op]}))
  const started = await run(['localnet', 'start', '--detach', '--runtime', 'host'])
  assert.equal(started.code, 0, started.stderr)
  const listed = JSON.parse((await run(['market', 'list', '--json'])).stdout) as {
    markets: {market: string; hostManager: {slug: string}}[]
  }
  const bySlug = new Map(listed.markets.map((m) => [m.hostManager.slug, m.market]))
  const status = JSON.parse((await run(['localnet', 'status', '--json'])).stdout) as {
    nodes: {address: string; slug: string}[]
  }
  const waitingNode = status.nodes.find((n) => n.slug === 'localnet')!.address
  const left = await run(['localnet', 'node', 'leave', waitingNode])
  assert.equal(left.code, 0, left.stderr)
  return {env, file, bySlug, waitingNode, run}
}
