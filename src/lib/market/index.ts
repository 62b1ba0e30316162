/** The jobs program's codecs and the network presets, shared by the client and the localnet. */
export * from './codec/accounts.js'
export * from '../text/amounts.js'
export {accountDiscriminator, instructionDiscriminator} from './codec/discriminator.js'
export * from './codec/instructions.js'
export * from './codec/ipfs-hash.js'
export * from './networks.js'
export * from './codec/pda.js'
export {runFilters} from './jobs/jobs.js'
