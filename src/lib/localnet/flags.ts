/** Flags shared by the `localnet` commands. */
import {Flags} from '@oclif/core'

import {defaultDataDir, defaultPort} from './paths.js'

export const dataDirFlag = Flags.string({
  description: 'data directory of the localnet [default: $GPUNET_LOCALNET_DIR, else $XDG_DATA_HOME/gpunet/localnet]',
  default: async () => defaultDataDir(),
  defaultHelp: async () => '~/.local/share/gpunet/localnet',
})

export const portFlag = Flags.integer({
  description: 'JSON-RPC port; the WebSocket endpoint takes the next one; 0 picks a free pair [default: $GPUNET_LOCALNET_PORT, else 28899]',
  min: 0,
  max: 65534,
  default: async () => defaultPort(),
  defaultHelp: async () => '28899',
})
