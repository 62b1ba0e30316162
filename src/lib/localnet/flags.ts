/** Flags shared by the `localnet` commands. */
import {resolve} from 'node:path'

import {Flags} from '@oclif/core'

import {defaultDataDir, defaultPort} from './paths.js'

export const dataDirFlag = Flags.string({
  description: 'data directory of the localnet',
  default: async () => defaultDataDir(),
  // Absolute, so a localnet started in the background finds it whatever its working directory.
  parse: async (input) => resolve(input),
  defaultHelp: async () => '$GPUNET_LOCALNET_DIR, else $XDG_DATA_HOME/gpunet/localnet',
})

export const portFlag = Flags.integer({
  description: 'JSON-RPC port; the WebSocket endpoint takes the next one; 0 picks a free pair',
  min: 0,
  max: 65534,
  default: async () => defaultPort(),
  defaultHelp: async () => '$GPUNET_LOCALNET_PORT, else 28899',
})
