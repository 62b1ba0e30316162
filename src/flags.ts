import {Flags} from '@oclif/core'

import {NETWORKS} from './lib/network.js'

/** The flags of every command that talks to a network: which network, which secrets service, which wallet. */
export const networkFlags = {
  network: Flags.string({
    description: 'network to use',
    options: [...NETWORKS],
    default: 'localnet',
    env: 'GPUNET_NETWORK',
  }),
  'secrets-url': Flags.string({
    description: 'secrets service URL (default: GPUNET_SECRETS_URL, then the config file)',
    helpValue: 'URL',
  }),
  wallet: Flags.string({
    description: 'Solana keypair file (default: GPUNET_WALLET, then ~/.config/gpunet/wallet.json)',
    helpValue: 'FILE',
  }),
}
