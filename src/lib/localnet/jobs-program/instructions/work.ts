/**
 * `work`: a node asks for a job. With a job queued it takes the first at once (a run is created at the fresh
 * `run` key); otherwise it joins the node queue. It enforces the node's stake and, on a gated market, its access
 * NFT, a fresh signing `run` key and one place in the queue (`NodeAlreadyQueued`).
 */
import {QueueType} from '../../../market/codec/accounts.js'
import {require} from '../accounts.js'
import {JobsError} from '../errors.js'
import {
  addToQueue,
  createRun,
  freshRun,
  type InstructionDef,
  mut,
  nodeGateAccounts,
  popFirst,
  ro,
  systemProgram,
} from '../instruction-kit.js'

/** The `work` instruction. */
export const work: InstructionDef<'work'> = {
  accounts: [
    mut('run', 'unchecked', {checks: freshRun}),
    mut('market', 'market', {
      checks: (a) => {
        const market = a.market()
        const node = a.key('authority')
        if (market.queueType !== QueueType.JOB)
          require(!market.queue.some((k) => k.equals(node)), JobsError.NodeAlreadyQueued, 'market')
      },
    }),
    mut('payer', 'signer'),
    ...nodeGateAccounts,
    ro('authority', 'signer'),
    systemProgram,
  ],
  handler(a) {
    const market = a.market()
    const node = a.key('authority')
    if (market.queueType === QueueType.JOB) createRun(a, popFirst(market), node)
    else addToQueue(market, node, QueueType.NODE)
  },
}
