import * as Flags from '@oclif/core/flags'

import {NETWORKS} from '../lib/network.js'

/** Where the `config` commands act: a profile (`--profile`, `GPUNET_PROFILE`), else a network's section. */
export const configScopeFlags = {
  profile: Flags.string({
    description: 'act on this profile (created by setting its network first)',
    env: 'GPUNET_PROFILE',
    helpValue: 'NAME',
  }),
  network: Flags.string({
    description: "act on this network's section of the config file (without --profile)",
    options: [...NETWORKS],
    default: 'localnet',
    env: 'GPUNET_NETWORK',
  }),
}
