/** The jobs program's codecs and the network presets, shared by the client and the localnet. */
export * from './accounts.js'
export * from '../text/amounts.js'
export {accountDiscriminator, instructionDiscriminator} from './discriminator.js'
export * from './instructions.js'
export * from './ipfs-hash.js'
export * from './networks.js'
export * from './pda.js'
export {runFilters} from './jobs.js'
