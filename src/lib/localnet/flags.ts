/** Flags shared by the `localnet` commands. */
import {resolve} from 'node:path'

import * as Flags from '@oclif/core/flags'

import {DEFAULT_CONTENT_MAX_BYTES} from '../ipfs/store.js'
import {DEFAULT_GATEWAY_PORT} from '../node/gateway.js'
import type {PullPolicy} from '../node/runtime/podman.js'
import {ExitCode, GpunetError} from '../errors.js'
import type {InForce} from '../network.js'
import {isLocalnetIds, LOCALNET_IDS, type LocalnetIds} from './ids.js'
import type {LocalnetNodeOptions} from './node-agent.js'
import {nodeCount} from './node-count.js'
import {RUNTIME_CHOICES, type RuntimeChoice} from './runtime-choice.js'
import {defaultDataDir, defaultGatewayPort, defaultPort} from './paths.js'

export const dataDirFlag = Flags.string({
  description: 'data directory of the localnet',
  default: async () => defaultDataDir(process.env),
  // Absolute, so a localnet started in the background finds it whatever its working directory.
  parse: async (input) => resolve(input),
  defaultHelp: async () => '$GPUNET_LOCALNET_DIR, else $XDG_DATA_HOME/gpunet/localnet',
})

export const idsFlag = Flags.string({
  description:
    "whose addresses a new chain's jobs program and token mint get: own, devnet or mainnet (an existing chain keeps its own)",
  options: [...LOCALNET_IDS],
  helpValue: 'own|devnet|mainnet',
})

/**
 * The ids a new chain is created with: the `localnetIds` setting in force (--ids, else GPUNET_LOCALNET_IDS, a
 * profile's or the config's); undefined when none is set (a new chain then has its own).
 */
export function idsInForce(setting: InForce | undefined): LocalnetIds | undefined {
  if (setting === undefined || isLocalnetIds(setting.value)) return setting?.value as LocalnetIds | undefined
  throw new GpunetError(
    'config_value_invalid',
    `localnetIds must be one of ${LOCALNET_IDS.join(', ')}, not "${setting.value}"`,
    {
      exitCode: ExitCode.USAGE,
      hint: `fix it where it is set (${setting.source}), e.g. \`gpunet config set localnetIds devnet --network localnet\``,
    },
  )
}

/** `--nodes N`: a string, so that the one check (node-count.ts) answers every bad value with the same exit 2. */
export const nodesFlag = Flags.string({
  description: 'node agents to run, each with its own key and stake and one job at a time (1 to 16)',
  helpValue: 'N',
  defaultHelp: async () => "$GPUNET_LOCALNET_NODES, a profile's or the config's `nodes`, else 1",
})

/** The node count in force (--nodes, else GPUNET_LOCALNET_NODES, a profile's or the config's `nodes`), else 1. */
export function nodesInForce(setting: InForce | undefined): number {
  if (setting === undefined) return 1
  const bad = (why: string) =>
    new GpunetError('nodes_invalid', `nodes ${why}`, {
      exitCode: ExitCode.USAGE,
      hint: `fix it where it is set (${setting.source}), e.g. \`gpunet localnet start --nodes 4\``,
    })
  return Number(nodeCount(setting.value, bad))
}

export const portFlag = Flags.integer({
  description: 'JSON-RPC port; the WebSocket endpoint takes the next one; 0 picks a free pair',
  min: 0,
  max: 65534,
  default: async () => defaultPort(process.env),
  defaultHelp: async () => '$GPUNET_LOCALNET_PORT, else 28899',
})

/** The content store's disk use (`localnet start`); past it an upload answers 507. */
export const contentMaxBytesFlag = Flags.integer({
  description: 'most bytes the content store keeps on disk; an upload past it answers 507',
  min: 1,
  env: 'GPUNET_CONTENT_MAX_BYTES',
  defaultHelp: async () => `$GPUNET_CONTENT_MAX_BYTES, else ${DEFAULT_CONTENT_MAX_BYTES} (2 GiB)`,
})

/** The content flag again, for a localnet started in the background or by `localnet reset`. */
export function contentArgs(flags: {'content-max-bytes'?: number}): string[] {
  const max = flags['content-max-bytes']
  return max === undefined ? [] : ['--content-max-bytes', String(max)]
}

/** Flags of the localnet's node agent and gateway (`localnet start`). */
export const nodeFlags = {
  node: Flags.boolean({
    description: 'run the node agent that takes and runs posted jobs (--no-node: jobs stay queued)',
    default: true,
    allowNo: true,
  }),
  gpus: Flags.integer({
    description:
      'GPUs the node says it has (detected from /dev/nvidia* otherwise); jobs needing one are not taken without',
    min: 0,
    env: 'GPUNET_NODE_GPUS',
  }),
  'host-processes': Flags.boolean({
    description: 'without podman, run jobs as plain host processes: NO isolation, every result says so',
    env: 'GPUNET_NODE_HOST_PROCESSES',
  }),
  runtime: Flags.string({
    description:
      'how the node runs jobs: auto (podman, else host processes if --host-processes), podman only, or host processes (NO isolation)',
    options: [...RUNTIME_CHOICES],
    env: 'GPUNET_NODE_RUNTIME',
    default: 'auto',
  }),
  'gateway-port': Flags.integer({
    description: 'port of the gateway serving exposed job ports on 127.0.0.1; 0 picks a free one',
    min: 0,
    max: 65535,
    env: 'GPUNET_GATEWAY_PORT',
    defaultHelp: async () => `$GPUNET_GATEWAY_PORT, else the RPC port + 81 (${DEFAULT_GATEWAY_PORT})`,
  }),
  pull: Flags.string({
    description: 'when the node pulls job images',
    options: ['missing', 'always', 'never'],
    env: 'GPUNET_NODE_PULL',
    default: 'missing',
  }),
}

interface NodeFlagValues {
  /** The RPC port, which the gateway's follows unless it is given. */
  port: number
  node: boolean
  /** The node count in force (nodesInForce), not the raw flag. */
  nodes: number
  gpus?: number
  'host-processes'?: boolean
  runtime: string
  'gateway-port'?: number
  pull: string
}

/** The gateway port: as given, else following the RPC port (paths.ts). */
function gatewayPort(flags: NodeFlagValues): number {
  return flags['gateway-port'] ?? defaultGatewayPort(flags.port)
}

/** The node agent's settings from the flags; undefined with --no-node. */
export function nodeOptions(flags: NodeFlagValues, log: (line: string) => void): LocalnetNodeOptions | undefined {
  if (!flags.node) return undefined
  return {
    gpus: flags.gpus,
    hostProcesses: flags['host-processes'] ?? false,
    runtime: flags.runtime as RuntimeChoice,
    gatewayPort: gatewayPort(flags),
    nodes: flags.nodes,
    pull: flags.pull as PullPolicy,
    // The node's own variable, read here with its flags so that the node layer takes a value (docs/node.md).
    resources: process.env.GPUNET_HF_ENDPOINT ? {hfEndpoint: process.env.GPUNET_HF_ENDPOINT} : undefined,
    log,
  }
}

/** The same flags for a localnet started in the background. */
export function nodeArgs(flags: NodeFlagValues): string[] {
  if (!flags.node) return ['--no-node']
  const args = ['--runtime', flags.runtime, '--gateway-port', String(gatewayPort(flags)), '--pull', flags.pull]
  if (flags.gpus !== undefined) args.push('--gpus', String(flags.gpus))
  if (flags['host-processes']) args.push('--host-processes')
  if (flags.nodes !== 1) args.push('--nodes', String(flags.nodes))
  return args
}
