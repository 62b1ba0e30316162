import {strict as assert} from 'node:assert'

import type {JobDefinition} from '../../../src/lib/definition/schema.js'
import {exposedPorts, serviceUrls} from '../../../src/lib/market/service-url.js'

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

  it('uses https://<job>.node.<network_host> on devnet and mainnet, and nothing without a host', () => {
    assert.deepEqual(serviceUrls('mainnet', JOB, definition, {networkHost: 'example.net'}), [
      {port: 8080, url: `https://${JOB}.node.example.net`},
      {port: 11434, url: `https://${JOB}.node.example.net`},
    ])
    assert.deepEqual(serviceUrls('devnet', JOB, definition, {networkHost: null}), [])
  })

  it("uses the localnet gateway's host and port on localnet (<job>-<port> past the first), nothing without one", () => {
    assert.deepEqual(serviceUrls('localnet', JOB, definition, {gatewayUrl: 'http://node.localhost:41234'}), [
      {port: 8080, url: `http://${JOB}.node.localhost:41234/`},
      {port: 11434, url: `http://${JOB}-11434.node.localhost:41234/`},
    ])
    assert.deepEqual(serviceUrls('localnet', JOB, definition, {gatewayUrl: null}), [])
  })
})
