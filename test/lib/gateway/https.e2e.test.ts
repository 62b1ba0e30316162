/**
 * The localnet's gateway over https, end to end (podman): a deployment of one replica of an HTTP service that
 * answers with its job's address, reached at its job's name, at its stable URL and at its node's API, by a client
 * that trusts the localnet's authority alone (`ca` on the request, the file `localnet status` names); a client that
 * does not trust it is refused. Names resolve to 127.0.0.1 in the client, as browsers resolve `*.localhost`.
 */
import {strict as assert} from 'node:assert'
import {readFileSync} from 'node:fs'

import {PublicKey} from '@solana/web3.js'

import {localnetTlsFiles} from '../../../src/lib/localnet/paths.js'
import {api, createDeployment, deploymentJobs} from '../../helpers/deployments.js'
import {eventually} from '../../helpers/eventually.js'
import {type HttpsAnswer, httpsGet} from '../../helpers/https.js'
import {useLocalnet} from '../../helpers/localnet.js'
import {ECHO_JOB, requirePodman} from '../../helpers/podman.js'

const body = (answer: HttpsAnswer) => ('status' in answer && answer.status === 200 ? answer.body : undefined)

describe('the localnet gateway over https (podman)', function () {
  this.timeout(180_000)
  requirePodman()
  const t = useLocalnet({node: {gatewayPort: 0, pull: 'never', healthIntervalMs: 200, gpus: 0}})

  it("serves a job's port, a deployment's stable URL and the node's API to a client trusting the localnet's CA alone", async () => {
    const {runtime} = t.ln
    assert.match(runtime.gatewayHttpsUrl ?? '', /^https:\/\/node\.localhost:\d+$/)
    assert.equal(runtime.caCertificate, localnetTlsFiles(t.dataDir).caCert)
    const httpsPort = new URL(runtime.gatewayHttpsUrl!).port
    assert.deepEqual(runtime.frpServerAddress, {
      http: `node.localhost:${new URL(runtime.gatewayUrl!).port}`,
      https: `node.localhost:${httpsPort}`,
    })
    const ca = readFileSync(runtime.caCertificate!, 'utf8')

    const url = runtime.deploymentManager!
    const owner = t.wallet
    const d = await createDeployment(url, owner, {job_definition: ECHO_JOB, replicas: 1, strategy: 'SIMPLE'})
    t.ln.node.fund(new PublicKey(d.vault), {lamports: 100_000_000n, tokens: 1_000_000n})
    assert.equal((await api(url, owner, 'POST', `/api/deployments/${d.id}/start`)).status, 200)
    const job = await eventually('the replica running', 60_000, async () => {
      const rows = await deploymentJobs(url, owner, d.id)
      return rows.length === 1 && rows[0]!.state === 'RUNNING' ? rows[0]!.job : undefined
    })

    const jobUrl = `https://${job}.node.localhost:${httpsPort}/`
    assert.equal(
      await eventually('the job answering over https', 60_000, async () => body(await httpsGet(jobUrl, ca))),
      job,
    )
    const stable = `https://${d.id}.deploy.localhost:${httpsPort}/`
    assert.equal(
      await eventually('the stable URL answering over https', 30_000, async () => body(await httpsGet(stable, ca))),
      job,
    )
    const node = (runtime.node as {address: string}).address
    assert.equal(body(await httpsGet(`https://${node}.node.localhost:${httpsPort}/`, ca)), JSON.stringify(node))

    // Node's own list of authorities does not hold the localnet's: verification fails, nothing is served.
    assert.deepEqual(await httpsGet(jobUrl), {error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'})
  })
})
