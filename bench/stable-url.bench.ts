/**
 * Issue 37: what a deployment's stable URL costs over its replica's own URL on the localnet gateway. One localnet
 * (its deployment manager, one node running host processes), one deployment of one replica (busybox httpd), and
 * GETs alternating between `http://<deployment>.deploy.localhost:<port>/` and `http://<job>.node.localhost:<port>/`
 * over one keep-alive client, so both see the same machine at the same moments: median and p99 side by side, and
 * their ratio. The stable URL's extra work per request: the manager's rows of the deployment (SQLite), the node's
 * endpoint state, the draining flags, round robin.
 */
import {existsSync} from 'node:fs'
import {Agent} from 'node:http'

import {get, oneReplicaDeployment, quantile} from './one-replica.js'

const ROUNDS = 2000
const WARM_UP = 200

export default async function bench(): Promise<void> {
  if (!existsSync('/bin/busybox')) {
    process.stdout.write('busybox: not available here (the replica is its httpd), skipped\n')
    return
  }
  const {gateway, stable, job, close} = await oneReplicaDeployment(
    'stable-url',
    (port) => `echo served > index.html && exec /bin/busybox httpd -f -p 127.0.0.1:${port} -h .`,
  )
  const agent = new Agent({keepAlive: true, maxSockets: 1})
  try {
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
    await close()
  }
}
