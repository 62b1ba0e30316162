/**
 * `job post` of a definition with `deployment_id` through the built CLI, on a localnet whose node runs it in
 * podman: it prints the deployment's URL as the network's CLI does (beside the localnet's own names, which stay),
 * in text and in `--json`, and the URL answers; a `deployment_id` that is not a string is refused before paying,
 * in either definition form (exit 3), as the network's validator refuses it. Names computed with @nosana/sdk.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {runCli} from '../../helpers/cli.js'
import {type CliSandbox, cliSandbox} from '../../helpers/cli-localnet.js'
import {eventually} from '../../helpers/eventually.js'
import {gatewayGet} from '../../helpers/node.js'
import {type NetworkSdk, networkSdk} from '../../helpers/network-names.js'
import {requirePodman, TEST_IMAGE} from '../../helpers/podman.js'

interface Posted {
  job: string
  project: string
  serviceUrls: {op: string; port: number; url: string; kind: string}[]
  deploymentUrls: {op: string; port: number; url: string}[]
}

const SERVE = 'mkdir -p /www && echo deployed > /www/index.html && exec httpd -f -p 8080 -h /www'

describe('gpunet job post with deployment_id', function () {
  this.timeout(120_000)
  requirePodman()
  let box: CliSandbox
  let env: NodeJS.ProcessEnv
  let gateway: string
  let sdk: NetworkSdk

  const file = (name: string, definition: unknown): string => {
    const path = join(box.dir, `${name}.json`)
    writeFileSync(path, JSON.stringify(definition))
    return path
  }
  const cli = (args: string[]) => runCli(args, {env})

  before(async function () {
    this.timeout(120_000)
    sdk = await networkSdk()
    box = cliSandbox()
    env = {...box.env, GPUNET_GATEWAY_PORT: '0', GPUNET_NODE_PULL: 'never'}
    const started = await cli(['localnet', 'start', '--detach', '--json'])
    assert.equal(started.code, 0, started.stderr)
    const status = JSON.parse(started.stdout) as {node: {off?: string} | null; gatewayUrl: string}
    assert.ok(status.node && !('off' in status.node), `the node is off: ${JSON.stringify(status.node)}`)
    gateway = new URL(status.gatewayUrl).host
  })
  after(async () => {
    await box?.cleanup()
  })

  it('prints the deployment URL and the network names beside the localnet own ones (text and --json)', async () => {
    const definition = {
      version: '0.1',
      type: 'container',
      deployment_id: 'my-service',
      ops: [{id: 'web', type: 'container/run', args: {image: TEST_IMAGE, cmd: SERVE, expose: 8080}}],
    }
    const path = file('deployed', definition)
    const json = await cli(['job', 'post', '--file', path, '--timeout', '600', '--json'])
    assert.equal(json.code, 0, json.stderr)
    const posted = JSON.parse(json.stdout) as Posted
    const hash = sdk.createHash(`my-service:${posted.project}`, 45)
    const label = sdk.getExposeIdHash(hash, 'web', 0)
    assert.deepEqual(posted.deploymentUrls, [{op: 'web', port: 8080, url: `http://${label}.${gateway}/`}])
    assert.deepEqual(posted.serviceUrls, [
      {op: 'web', port: 8080, url: `http://${posted.job}.${gateway}/`, kind: 'gpunet'},
      {op: 'web', port: 8080, url: `http://${sdk.getExposeIdHash(posted.job, 0, 8080)}.${gateway}/`, kind: 'network'},
    ])
    assert.match(json.stderr, /deployment_id.*goes beyond spec 0\.1/)
    const answer = await eventually('the deployment URL to answer', 60_000, async () => {
      const got = await gatewayGet(posted.deploymentUrls[0]!.url)
      return got.status === 200 ? got : undefined
    })
    assert.equal(answer.body, 'deployed\n')
    assert.equal((await gatewayGet(posted.serviceUrls[1]!.url)).body, 'deployed\n', 'the expose-id hash answers')

    const text = await cli(['job', 'post', '--file', path, '--timeout', '600'])
    assert.equal(text.code, 0, text.stderr)
    const job = /^Posted job (\w+) on localnet$/m.exec(text.stdout)?.[1]
    assert.ok(job, text.stdout)
    // The rows' columns are aligned: compared with single spaces.
    const rows = text.stdout.replace(/ +/g, ' ')
    assert.ok(rows.includes(` Service web:8080 http://${job}.${gateway}/\n`), text.stdout)
    const network = sdk.getExposeIdHash(job, 0, 8080)
    assert.ok(rows.includes(` Network URL web:8080 http://${network}.${gateway}/\n`), text.stdout)
    assert.ok(rows.includes(` Deployment web:8080 http://${label}.${gateway}/\n`), text.stdout)
  })

  it('refuses a deployment_id that is not a string before paying, in either form (exit 3)', async () => {
    const spec = {
      version: '0.1',
      type: 'container',
      deployment_id: 7,
      ops: [{id: 'a', type: 'container/run', args: {image: TEST_IMAGE}}],
    }
    const health = {type: 'http', path: '/', method: 'GET', expected_status: 200, continuous: true}
    const network = {
      ...spec,
      deployment_id: {name: 'x'},
      ops: [{id: 'a', type: 'container/run', args: {image: TEST_IMAGE, expose: [{port: 80, health_checks: [health]}]}}],
    }
    for (const [name, definition] of Object.entries({spec, network})) {
      const result = await cli(['job', 'post', '--file', file(`bad-${name}`, definition), '--json'])
      assert.equal(result.code, 3, `${name}: ${result.stderr}${result.stdout}`)
      const {error} = JSON.parse(result.stdout) as {error: {errors: {path: string; message: string}[]}}
      assert.ok(
        error.errors.some((e) => e.path === 'deployment_id' && /expected \(string \| undefined\)/.test(e.message)),
        `${name}: ${JSON.stringify(error.errors)}`,
      )
      const human = await cli(['job', 'post', '--file', file(`bad-${name}`, definition)])
      assert.equal(human.code, 3)
      assert.match(human.stderr, /nothing was uploaded or sent/)
    }
  })
})
