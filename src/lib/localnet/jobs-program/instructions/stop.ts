/**
 * `stop`: a node leaves the node queue. It enforces a node queue (`MarketInWrongState`) and the signature of the
 * node or of the market's authority (`Unauthorized`); a node not in the queue is `NotInMarketQueue`.
 */
import {QueueType} from '../../../market/codec/accounts.js'
import {require} from '../accounts.js'
import {JobsError, NosanaError} from '../errors.js'
import {type InstructionDef, mut, removeFromQueue, ro} from '../instruction-kit.js'

/** The `stop` instruction. */
export const stop: InstructionDef<'stop'> = {
  accounts: [
    mut('market', 'market', {
      checks: (a) => {
        const market = a.market()
        const signer = a.key('authority')
        require(market.queueType === QueueType.NODE, JobsError.MarketInWrongState, 'market')
        require(market.authority.equals(signer) || a.key('node').equals(signer), NosanaError.Unauthorized, 'market')
      },
    }),
    ro('node', 'unchecked'),
    ro('authority', 'signer'),
  ],
  handler(a) {
    removeFromQueue(a.market(), a.key('node'))
  },
}
