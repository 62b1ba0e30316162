/**
 * The network's names on a real localnet: two jobs of one poster carrying one `deployment_id`, each on its own node
 * in podman, served at the deployment's domain as frps serves a load-balancer group (both get requests; one whose
 * health path fails leaves after the failures; none left is a 404 at once), and each port at its expose-id hash.
 * The names are computed with @nosana/sdk's own functions. The group checks run every 200 ms here (10 s on a
 * localnet), so the failures take a second, not half a minute.
 */
import {strict as assert} from 'node:assert'

import type {PublicKey} from '@solana/web3.js'

import {containerName, defaultPodmanDataDir} from '../../../src/lib/node/runtime/podman.js'
import {eventually} from '../../helpers/eventually.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {gatewayGet, postNetwork, waitFor} from '../../helpers/node.js'
import {type NetworkSdk, networkSdk} from '../../helpers/network-names.js'
import {podman, requirePodman, TEST_IMAGE} from '../../helpers/podman.js'

const CHECK_INTERVAL_MS = 200
const DEPLOYMENT_ID = 'names-e2e'

/**
 * A service answering its name at `/` and 200 at `/health`, until `/tmp/down` appears in its container: then its
 * httpd reloads a configuration that puts `/health` behind a password (401), while `/` still answers.
 */
function service(name: string): Record<string, unknown> {
  const cmd =
    `mkdir -p /www && echo ${name} > /www/index.html && echo ok > /www/health && : > /tmp/httpd.conf; ` +
    'httpd -f -p 8080 -h /www -c /tmp/httpd.conf & pid=$!; ' +
    'while [ ! -e /tmp/down ]; do sleep 0.2; done; ' +
    "echo '/health:user:secret' > /tmp/httpd.conf; kill -HUP $pid; wait $pid"
  const health = {type: 'http', path: '/health', method: 'GET', expected_status: 200}
  return {
    version: '0.1',
    type: 'container',
    deployment_id: DEPLOYMENT_ID,
    ops: [
      {
        id: 'web',
        type: 'container/run',
        args: {image: TEST_IMAGE, cmd, expose: [{port: 8080, health_checks: [health]}]},
      },
    ],
  }
}

describe("localnet: the network's names of a deployment's jobs (podman)", function () {
  this.timeout(120_000)
  requirePodman()
  const t = useLocalnet({
    node: {
      gatewayPort: 0,
      pull: 'never',
      healthIntervalMs: 200,
      gpus: 0,
      nodes: 2,
      groupCheckIntervalMs: CHECK_INTERVAL_MS,
    },
  })
  let sdk: NetworkSdk
  let gateway: string
  const jobs: PublicKey[] = []

  before(async () => {
    sdk = await networkSdk()
    gateway = new URL(t.ln.runtime.gatewayUrl!).host
  })

  /** The URL of `label` on the localnet's gateway. */
  const at = (label: string, path = '/') => `http://${label}.${gateway}${path}`
  /** Makes a job's health path fail from now on. */
  const fail = async (job: PublicKey) => {
    const down = await podman(defaultPodmanDataDir(), [
      'exec',
      containerName(job.toBase58(), 'web'),
      'sh',
      '-c',
      ': > /tmp/down',
    ])
    assert.equal(down.code, 0, 'podman exec')
  }

  it("serves both jobs at the deployment's domain, each at its expose-id hash, in any case", async () => {
    for (const name of ['one', 'two']) jobs.push(await postNetwork(t, service(name)))
    for (const job of jobs) await waitFor(t, job, 'RUNNING')
    for (const [i, job] of jobs.entries()) {
      const label = sdk.getExposeIdHash(job.toBase58(), 0, 8080)
      const answer = await eventually(`job ${i} at its expose-id hash`, 60_000, async () => {
        const got = await gatewayGet(at(label.toUpperCase()))
        return got.status === 200 ? got : undefined
      })
      assert.equal(answer.body, `${['one', 'two'][i]}\n`)
    }
    // The poster is the job's project: the wallet that listed them.
    const hash = sdk.createHash(`${DEPLOYMENT_ID}:${t.wallet.publicKey.toBase58()}`, 45)
    const domain = at(sdk.getExposeIdHash(hash, 'web', 0).toLowerCase())
    const seen = new Set<string>()
    for (let i = 0; i < 8; i++) seen.add((await gatewayGet(domain)).body)
    assert.deepEqual([...seen].sort(), ['one\n', 'two\n'], 'requests spread over both members')
  })

  it('sends none to a job failing its health path, after the failures; with none healthy, 404 at once', async () => {
    const hash = sdk.createHash(`${DEPLOYMENT_ID}:${t.wallet.publicKey.toBase58()}`, 45)
    const domain = at(sdk.getExposeIdHash(hash, 'web', 0))
    await fail(jobs[0]!)
    // Three failures in a row, 200 ms apart: it leaves within a second or so.
    await eventually('the failing member to leave', 20_000, async () => {
      const bodies = new Set<string>()
      for (let i = 0; i < 6; i++) bodies.add((await gatewayGet(domain)).body)
      return bodies.size === 1 && bodies.has('two\n') ? true : undefined
    })
    for (let i = 0; i < 6; i++) assert.equal((await gatewayGet(domain)).body, 'two\n')
    // Its own name still answers: a group's check decides the group, not the port.
    assert.equal((await gatewayGet(at(sdk.getExposeIdHash(jobs[0]!.toBase58(), 0, 8080)))).body, 'one\n')

    await fail(jobs[1]!)
    await eventually('the last member to leave', 20_000, async () =>
      (await gatewayGet(domain)).status === 404 ? true : undefined,
    )
    const started = Date.now()
    const answer = await gatewayGet(domain)
    assert.equal(answer.status, 404)
    assert.ok(Date.now() - started < 1000, 'answered at once, not held')
  })
})
