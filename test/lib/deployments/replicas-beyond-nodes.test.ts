import {strict as assert} from 'node:assert'

import {replicasBeyondNodes} from '../../../src/lib/deployments/client/client-create.js'

describe("replicas beyond a localnet's nodes (issue 59)", () => {
  it('warns when replicas outnumber the nodes, with the --nodes to run', () => {
    assert.deepEqual(replicasBeyondNodes(2, 1), {
      code: 'replicas_beyond_nodes',
      message: '2 replicas, but the localnet runs 1 node, one job each: 1 of them would stay QUEUED',
      hint: 'run as many nodes: gpunet localnet stop && gpunet localnet start --detach --nodes 2',
    })
    assert.match(replicasBeyondNodes(1, 0)!.message, /the localnet runs no node: 1 of them would stay QUEUED/)
  })

  it("says nothing when the nodes suffice, or for a manager that is not the localnet's", () => {
    assert.equal(replicasBeyondNodes(2, 2), null)
    assert.equal(replicasBeyondNodes(1, 4), null)
    assert.equal(replicasBeyondNodes(50, null), null)
  })
})
