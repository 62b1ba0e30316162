/**
 * The flags of the `localnet` commands. Those that set a setting (catalog.ts) have no oclif default or env: the
 * resolver reads the variable, the profile and the config file below them, and the setting's kind reads the value
 * (src/lib/settings/kinds.ts), so `--port 28899` and `GPUNET_LOCALNET_PORT=28899` are one value read one way.
 */
import * as Flags from '@oclif/core/flags'

import {DEFAULT_CONTENT_MAX_BYTES} from '../lib/ipfs/store.js'
import {DEFAULT_GATEWAY_PORT} from '../lib/gateway/gateway.js'
import {LOCALNET_IDS, PULL_POLICIES, RUNTIME_CHOICES} from '../lib/settings/kinds.js'

export const dataDirFlag = Flags.string({
  description: 'data directory of the localnet',
  helpValue: 'DIR',
  defaultHelp: async () => '$GPUNET_LOCALNET_DIR, else $XDG_DATA_HOME/gpunet/localnet',
})

export const idsFlag = Flags.string({
  description:
    "whose addresses a new chain's jobs program and token mint get: own, devnet or mainnet (an existing chain keeps its own)",
  options: [...LOCALNET_IDS],
  helpValue: 'own|devnet|mainnet',
})

/** `--nodes N`: text, so that the nodes kind answers every bad value with the same exit 2. */
export const nodesFlag = Flags.string({
  description: 'node agents to run, each with its own key and stake and one job at a time (1 to 16)',
  helpValue: 'N',
  defaultHelp: async () => "$GPUNET_LOCALNET_NODES, a profile's or the config's `nodes`, else 1",
})

export const portFlag = Flags.string({
  description: 'JSON-RPC port; the WebSocket endpoint takes the next one; 0 picks a free pair',
  helpValue: 'PORT',
  defaultHelp: async () => '$GPUNET_LOCALNET_PORT, else 28899',
})

/** The content store's disk use (`localnet start`); past it an upload answers 507. */
export const contentMaxBytesFlag = Flags.string({
  description: 'most bytes the content store keeps on disk; an upload past it answers 507',
  helpValue: 'BYTES',
  defaultHelp: async () => `$GPUNET_CONTENT_MAX_BYTES, else ${DEFAULT_CONTENT_MAX_BYTES} (2 GiB)`,
})

/** `--drain-timeout DURATION`: text, so that the drain kind answers every bad value with the same exit 2. */
export const drainTimeoutFlag = Flags.string({
  description:
    "how long a retired replica keeps the requests and streams open to it through its deployment's stable URL " +
    "before its job stops and cuts them (divided by the deployment's time_scale): 1s to 24h",
  helpValue: 'DURATION',
  defaultHelp: async () => '$GPUNET_DRAIN_TIMEOUT, else 10m',
})

/** `--max-held N` (`localnet start`): text, so that its kind answers every bad value with the same exit 2. */
export const maxHeldFlag = Flags.string({
  description: 'requests its gateway holds per deployment starting from zero replicas; more get 503 at once: 1 to 1000',
  helpValue: 'N',
  defaultHelp: async () => '$GPUNET_MAX_HELD, else 100',
})

/** `--hold-timeout DURATION` (`localnet start`): text, so that its kind answers every bad value with the same exit 2. */
export const holdTimeoutFlag = Flags.string({
  description: 'how long its gateway holds a request of a deployment starting from zero, then 503: 1s to 30m',
  helpValue: 'DURATION',
  defaultHelp: async () => '$GPUNET_HOLD_TIMEOUT, else 120s',
})

/** Flags of the localnet's node agents and gateway (`localnet start`). */
export const nodeFlags = {
  node: Flags.boolean({
    description: 'run the node agent that takes and runs posted jobs (--no-node: jobs stay queued)',
    default: true,
    allowNo: true,
  }),
  gpus: Flags.string({
    description:
      'GPUs the node says it has (detected from /dev/nvidia* otherwise); jobs needing one are not taken without',
    helpValue: 'N',
    defaultHelp: async () => '$GPUNET_NODE_GPUS, else detected',
  }),
  'host-processes': Flags.boolean({
    description:
      'without podman, run jobs as plain host processes: NO isolation, every result says so [env: GPUNET_NODE_HOST_PROCESSES]',
  }),
  runtime: Flags.string({
    description:
      'how the node runs jobs: auto (podman, else host processes if --host-processes), podman only, or host processes (NO isolation)',
    options: [...RUNTIME_CHOICES],
    defaultHelp: async () => '$GPUNET_NODE_RUNTIME, else auto',
  }),
  'gateway-port': Flags.string({
    description: 'port of the gateway serving exposed job ports on 127.0.0.1; 0 picks a free one',
    helpValue: 'PORT',
    defaultHelp: async () => `$GPUNET_GATEWAY_PORT, else the RPC port + 81 (${DEFAULT_GATEWAY_PORT})`,
  }),
  'gateway-https-port': Flags.string({
    description:
      "port of the gateway's https side (the same services, the localnet's own certificate); 0 picks a free one",
    helpValue: 'PORT',
    defaultHelp: async () => `$GPUNET_GATEWAY_HTTPS_PORT, else the gateway port + 1 (${DEFAULT_GATEWAY_PORT + 1})`,
  }),
  pull: Flags.string({
    description: 'when the node pulls job images',
    options: [...PULL_POLICIES],
    defaultHelp: async () => '$GPUNET_NODE_PULL, else missing',
  }),
}

/** `localnet start --markets FILE` and `localnet reset --markets FILE`: the localnet's markets (docs/localnet.md). */
export const marketsFlag = Flags.string({
  description:
    'the localnet\'s markets and their nodes, a YAML or JSON file (docs/localnet.md, "Markets"); a chain keeps its markets',
  helpValue: 'FILE',
  defaultHelp: async () => '$GPUNET_LOCALNET_MARKETS, else the markets the chain keeps, else three default markets',
})
