import {strict as assert} from 'node:assert'

import type {JobDefinition} from '../../../src/lib/definition/schema.js'
import {
  deploymentHash,
  deploymentLabel,
  deploymentUrls,
  exposedPorts,
  localnetNetworkUrls,
  serviceId,
  serviceUrls,
} from '../../../src/lib/market/service-url.js'
import {networkSdk} from '../../helpers/network-names.js'

const JOB = '7nxXoihx65yRGZiGzWZsFMz8D7qwxFePNKvDBWZnxc41'
const definition = {
  version: '0.1',
  type: 'container',
  ops: [
    {id: 'a', type: 'container/run', args: {image: 'x', expose: 8080}},
    {id: 'b', type: 'container/run', args: {image: 'x', expose: [{port: 11434}, {port: 8080}]}},
    {id: 'c', type: 'container/run', args: {image: 'x'}},
  ],
} as JobDefinition

describe('service URLs', () => {
  it('lists each exposed port once, in operation order', () => {
    assert.deepEqual(exposedPorts(definition), [8080, 11434])
  })

  it('matches the reference vector: job Bihphg…, operation 0, port 80', () => {
    const job = 'Bihphg5JicfPwPM23hKoCaDVcvfer5kmotLrwZgZ75SE'
    assert.equal(serviceId(job, 0, 80), '3TZ3Lx1S3qemPQE2KDfuA2H1j21yHNurt62GazH1npJb')
    const one = {ops: [{id: 'web', args: {expose: [{port: 80, health_checks: []}]}}]}
    assert.deepEqual(serviceUrls('mainnet', job, one, {networkHost: 'k8s.prd.nos.ci'}), [
      {op: 'web', port: 80, url: 'https://3TZ3Lx1S3qemPQE2KDfuA2H1j21yHNurt62GazH1npJb.node.k8s.prd.nos.ci'},
    ])
  })

  it('gives each operation and port its own hashed URL on devnet and mainnet, nothing without a host', () => {
    const urls = serviceUrls('devnet', JOB, definition, {networkHost: 'k8s.dev.nos.ci'})
    assert.deepEqual(
      urls.map(({op, port}) => `${op}:${port}`),
      ['a:8080', 'b:11434', 'b:8080'],
    )
    for (const {url} of urls) assert.match(url, /^https:\/\/[1-9A-HJ-NP-Za-km-z]{44}\.node\.k8s\.dev\.nos\.ci$/)
    assert.equal(new Set(urls.map((u) => u.url)).size, 3, 'the same port of two operations has two URLs')
    assert.equal(urls[0]!.url, `https://${serviceId(JOB, 0, 8080)}.node.k8s.dev.nos.ci`)
    assert.equal(urls[2]!.url, `https://${serviceId(JOB, 1, 8080)}.node.k8s.dev.nos.ci`)
    assert.notEqual(serviceId(JOB, 0, 8080), serviceId(JOB, 0, 8081), 'the port is hashed')
    assert.notEqual(serviceId(JOB, 0, 8080), serviceId('Bihphg5JicfPwPM23hKoCaDVcvfer5kmotLrwZgZ75SE', 0, 8080))
    assert.deepEqual(serviceUrls('devnet', JOB, definition, {networkHost: null}), [])
  })

  it("uses the localnet gateway's host and port on localnet (<job>-<port> past the first), nothing without one", () => {
    assert.deepEqual(serviceUrls('localnet', JOB, definition, {gatewayUrl: 'http://node.localhost:41234'}), [
      {op: 'a', port: 8080, url: `http://${JOB}.node.localhost:41234/`},
      {op: 'b', port: 11434, url: `http://${JOB}-11434.node.localhost:41234/`},
    ])
    assert.deepEqual(serviceUrls('localnet', JOB, definition, {gatewayUrl: null}), [])
  })
})

describe("the network's deployment names", () => {
  const POSTER = 'HmwXkQ2HjDvYWb5qDW3BfLUHgN7SN7rZuAkM1Wk5NqcQ'

  it('hash as the sdk does: the deployment key from deployment_id and the poster, an operation label from it', async () => {
    const sdk = await import('@nosana/sdk')
    const hash = deploymentHash('my-service', POSTER)
    assert.equal(hash, sdk.createHash(`my-service:${POSTER}`, 45))
    assert.equal(hash.length, 45)
    assert.equal(deploymentLabel(hash, 'web'), sdk.getExposeIdHash(hash, 'web', 0))
    assert.equal(serviceId(JOB, 2, 8080), sdk.getExposeIdHash(JOB, 2, 8080))
    assert.notEqual(deploymentHash('my-service', JOB), hash, 'the poster is hashed')
    assert.notEqual(deploymentLabel(hash, 'api'), deploymentLabel(hash, 'web'), 'the operation is hashed')
  })
})

describe("the network's URLs a report lists", () => {
  const POSTER = 'HmwXkQ2HjDvYWb5qDW3BfLUHgN7SN7rZuAkM1Wk5NqcQ'
  const gateway = {gatewayUrl: 'http://node.localhost:41234'}

  it("each port's expose-id hash on the localnet's gateway, every operation counted", async () => {
    const sdk = await networkSdk()
    assert.deepEqual(localnetNetworkUrls(JOB, definition, gateway), [
      {op: 'a', port: 8080, url: `http://${sdk.getExposeIdHash(JOB, 0, 8080)}.node.localhost:41234/`},
      {op: 'b', port: 11434, url: `http://${sdk.getExposeIdHash(JOB, 1, 11434)}.node.localhost:41234/`},
      {op: 'b', port: 8080, url: `http://${sdk.getExposeIdHash(JOB, 1, 8080)}.node.localhost:41234/`},
    ])
    assert.deepEqual(localnetNetworkUrls(JOB, definition, {gatewayUrl: null}), [])
  })

  it("each exposed operation's deployment URL, at its first port, as the network's CLI prints it", async () => {
    const sdk = await networkSdk()
    const hash = sdk.createHash(`svc:${POSTER}`, 45)
    const deployed = {...definition, deployment_id: 'svc'}
    assert.deepEqual(deploymentUrls('devnet', deployed, POSTER, {networkHost: 'k8s.dev.nos.ci'}), [
      {op: 'a', port: 8080, url: `https://${sdk.getExposeIdHash(hash, 'a', 0)}.node.k8s.dev.nos.ci`},
      {op: 'b', port: 11434, url: `https://${sdk.getExposeIdHash(hash, 'b', 0)}.node.k8s.dev.nos.ci`},
    ])
    assert.deepEqual(deploymentUrls('localnet', deployed, POSTER, gateway), [
      {op: 'a', port: 8080, url: `http://${sdk.getExposeIdHash(hash, 'a', 0)}.node.localhost:41234/`},
      {op: 'b', port: 11434, url: `http://${sdk.getExposeIdHash(hash, 'b', 0)}.node.localhost:41234/`},
    ])
    assert.deepEqual(deploymentUrls('devnet', definition, POSTER, {networkHost: 'k8s.dev.nos.ci'}), [], 'no id, none')
    assert.deepEqual(deploymentUrls('devnet', {...definition, deployment_id: 7}, POSTER, {networkHost: 'h'}), [])
  })
})
