import {strict as assert} from 'node:assert'

import {defaultGatewayHttpsPort, defaultGatewayPort} from '../../../src/lib/localnet/paths.js'
import {readStartArgs, startDifferences} from '../../../src/lib/localnet/server/start-args.js'

describe('a second localnet start against the one running (issue 59)', () => {
  const running = {
    args: ['--runtime', 'auto', '--gateway-port', '28980', '--pull', 'missing'],
    port: 28899,
    gatewayPort: 28980,
  }
  const wanted = (args: string[], given: string[], port = 28899) => ({args, port, given: new Set(given)})
  const defaults = ['--runtime', 'auto', '--gateway-port', '28980', '--pull', 'missing']

  it('reads startArgs back, with the defaults of what they leave out', () => {
    assert.deepEqual(readStartArgs(['--no-node']), {
      node: false,
      runtime: null,
      gatewayPort: null,
      gatewayHttpsPort: null,
      pull: null,
      gpus: null,
      hostProcesses: false,
      nodes: 1,
      contentMaxBytes: 2 * 1024 ** 3,
      drainTimeoutMs: 600_000,
      maxHeld: 100,
      holdMs: 120_000,
    })
    const full = readStartArgs([...defaults, '--gpus', '2', '--host-processes', '--nodes', '3'])
    assert.deepEqual([full.gpus, full.hostProcesses, full.nodes, full.pull], [2, true, 3, 'missing'])
  })

  it('a flag given with the value it runs with, or not given at all, is no difference', () => {
    assert.deepEqual(startDifferences(running, wanted(defaults, ['pull', 'runtime', 'port'])), [])
    // Not given: --pull never from a default elsewhere is not the user's ask.
    const never = ['--runtime', 'auto', '--gateway-port', '28980', '--pull', 'never']
    assert.deepEqual(startDifferences(running, wanted(never, [])), [])
    // Port 0 asks for any free port: the running one's is one.
    assert.deepEqual(startDifferences(running, wanted(defaults, ['port', 'gateway-port'], 0)), [])
  })

  it('--pull never, another --nodes, --no-node, another port: each said, as it runs and as given', () => {
    const never = ['--runtime', 'auto', '--gateway-port', '28980', '--pull', 'never']
    assert.deepEqual(startDifferences(running, wanted(never, ['pull'])), [
      {flag: 'pull', running: '--pull missing', given: '--pull never'},
    ])
    assert.deepEqual(startDifferences(running, wanted([...defaults, '--nodes', '2'], ['nodes'])), [
      {flag: 'nodes', running: '--nodes 1', given: '--nodes 2'},
    ])
    assert.deepEqual(startDifferences(running, wanted(['--no-node'], ['node'])), [
      {flag: 'node', running: '--node', given: '--no-node'},
    ])
    assert.deepEqual(startDifferences(running, wanted(defaults, ['port'], 30000)), [
      {flag: 'port', running: '--port 28899', given: '--port 30000'},
    ])
    const gateway = ['--runtime', 'auto', '--gateway-port', '29000', '--pull', 'missing']
    assert.deepEqual(startDifferences(running, wanted(gateway, ['gateway-port'])), [
      {flag: 'gateway-port', running: '--gateway-port 28980', given: '--gateway-port 29000'},
    ])
    const https = {...running, gatewayHttpsPort: 28981}
    const otherHttps = [...defaults, '--gateway-https-port', '29001']
    assert.deepEqual(startDifferences(https, wanted(otherHttps, ['gateway-https-port'])), [
      {flag: 'gateway-https-port', running: '--gateway-https-port 28981', given: '--gateway-https-port 29001'},
    ])
    // 0 asks for any free port, and a localnet from before https has none to differ from.
    const anyHttps = [...defaults, '--gateway-https-port', '0']
    assert.deepEqual(startDifferences(https, wanted(anyHttps, ['gateway-https-port'])), [])
    assert.deepEqual(startDifferences(running, wanted(otherHttps, ['gateway-https-port'])), [])
    // The drain bound, node or not: the manager drains through the gateway either way.
    assert.deepEqual(
      startDifferences(running, wanted([...defaults, '--drain-timeout', '1800000ms'], ['drain-timeout'])),
      [{flag: 'drain-timeout', running: '--drain-timeout 600s', given: '--drain-timeout 1800s'}],
    )
    assert.deepEqual(
      startDifferences(running, wanted([...defaults, '--drain-timeout', '600000ms'], ['drain-timeout'])),
      [],
    )
  })

  it('node flags against a localnet without a node: each is said, against its --no-node', () => {
    const noNode = {args: ['--no-node'], port: 28899, gatewayPort: null}
    assert.deepEqual(startDifferences(noNode, wanted([...defaults.slice(0, 4), '--pull', 'never'], ['pull'])), [
      {flag: 'pull', running: '--no-node', given: '--pull never'},
    ])
    // Asked for no node either: nothing to apply them to.
    assert.deepEqual(startDifferences(running, wanted(['--no-node'], ['node', 'pull'])), [
      {flag: 'node', running: '--node', given: '--no-node'},
    ])
    assert.deepEqual(startDifferences(noNode, wanted(defaults, ['node'])), [
      {flag: 'node', running: '--no-node', given: '--node'},
    ])
  })

  it("the gateway's https port follows the gateway's, as the gateway's follows the RPC's", () => {
    assert.equal(defaultGatewayHttpsPort(defaultGatewayPort(28899)), 28981)
    assert.equal(defaultGatewayHttpsPort(defaultGatewayPort(30001)), 30083)
    // Any free gateway port gives any free https port; none past the last port.
    assert.equal(defaultGatewayHttpsPort(0), 0)
    assert.equal(defaultGatewayHttpsPort(65_535), 0)
  })
})
