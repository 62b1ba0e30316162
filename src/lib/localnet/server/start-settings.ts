/**
 * What `localnet start` takes from the command's settings (the flags among them): the node agents' options, the
 * content store's bound, and the flags that give a background or restarted localnet the same values. The settings
 * come typed (settings/kinds.ts read them); nothing here reads a flag or the environment.
 */
import type {Settings} from '../../settings/settings.js'
import type {LocalnetIds} from '../../settings/kinds.js'
import type {HoldBounds} from '../../gateway/holding.js'
import type {LocalnetNodeOptions} from '../nodes/node-agent.js'
import {defaultGatewayHttpsPort, defaultGatewayPort} from '../paths.js'

/** The settings `localnet start` reads. */
export type LocalnetStartSettings = Pick<Settings, 'typed' | 'localnet' | 'get'>

/** The ids a new chain is created with (the localnetIds setting); undefined when none is set (its own). */
export function idsInForce(settings: LocalnetStartSettings): LocalnetIds | undefined {
  return settings.typed('localnetIds')?.value
}

/** The node agents' options from the settings; undefined with --no-node. */
export function nodeOptions(
  settings: LocalnetStartSettings,
  node: boolean,
  log: (line: string) => void,
): LocalnetNodeOptions | undefined {
  if (!node) return undefined
  const hfEndpoint = settings.typed('hfEndpoint')?.value
  return {
    gpus: settings.typed('nodeGpus')?.value,
    hostProcesses: settings.typed('nodeHostProcesses')?.value ?? false,
    runtime: settings.typed('nodeRuntime')!.value,
    gatewayPort: gatewayPort(settings),
    gatewayHttpsPort: settings.typed('gatewayHttpsPort')?.value ?? defaultGatewayHttpsPort(gatewayPort(settings)),
    // Only when set: a markets file gives each market's count otherwise (the default markets: 1).
    nodes: nodesGiven(settings),
    pull: settings.typed('nodePull')!.value,
    pullSimulation: {
      rateMbPerSecond: settings.typed('pullRate')!.value,
      scale: settings.typed('pullScale')!.value,
    },
    resources: hfEndpoint ? {hfEndpoint} : undefined,
    hold: holdBounds(settings),
    log,
  }
}

/**
 * The gateway's hold bounds the maxHeld and holdTimeout settings give (their kinds checked them: exit 2 on a bad
 * one); a bound not set is left out, for holding.ts' default.
 */
export function holdBounds(settings: LocalnetStartSettings): Partial<HoldBounds> {
  const maxHeld = settings.typed('maxHeld')?.value
  const holdMs = settings.typed('holdTimeout')?.value
  return {...(maxHeld === undefined ? {} : {maxHeld}), ...(holdMs === undefined ? {} : {holdMs})}
}

/** The default market's node count when a setting gives it (`--nodes`, its variable, a profile, the config file). */
function nodesGiven(settings: LocalnetStartSettings): number | undefined {
  const found = settings.get('nodes')
  return found && found.from !== 'preset' ? settings.typed('nodes')!.value : undefined
}

/** The markets file in force (`--markets`, GPUNET_LOCALNET_MARKETS, a profile or the config file); undefined if none. */
export function marketsFile(settings: LocalnetStartSettings): string | undefined {
  return settings.typed('localnetMarkets')?.value
}

/** The token's USD price of the localnet's host manager (the tokenUsd setting). */
export function tokenUsd(settings: LocalnetStartSettings): number {
  return settings.typed('tokenUsd')!.value
}

/** The content store's disk bound (the contentStoreMaxBytes setting); undefined for the store's default. */
export function contentMaxBytes(settings: LocalnetStartSettings): number | undefined {
  return settings.typed('contentStoreMaxBytes')?.value
}

/** The deployment manager's drain bound (the drainTimeout setting); undefined for DRAIN_TIMEOUT_MS. */
export function drainTimeoutMs(settings: LocalnetStartSettings): number | undefined {
  return settings.typed('drainTimeout')?.value
}

/**
 * The `localnet start` flags that give a localnet started in the background (or again by `localnet reset`) the
 * node and content settings in force here, whichever layer set them.
 */
export function startArgs(settings: LocalnetStartSettings, node: boolean): string[] {
  const args = node ? nodeArgs(settings) : ['--no-node']
  const max = contentMaxBytes(settings)
  if (max !== undefined) args.push('--content-max-bytes', String(max))
  // The file's path, made absolute by its kind: a background localnet reads it again (reset drops it: the data
  // directory keeps the markets).
  const markets = marketsFile(settings)
  if (markets !== undefined) args.push('--markets', markets)
  const drain = drainTimeoutMs(settings)
  if (drain !== undefined) args.push('--drain-timeout', `${drain}ms`)
  return args
}

function nodeArgs(settings: LocalnetStartSettings): string[] {
  const options = nodeOptions(settings, true, () => {})!
  const args = ['--runtime', options.runtime!, '--gateway-port', String(options.gatewayPort), '--pull', options.pull!]
  // Only when set: otherwise the https port follows the gateway's there too.
  const https = settings.typed('gatewayHttpsPort')?.value
  if (https !== undefined) args.push('--gateway-https-port', String(https))
  if (options.gpus !== undefined) args.push('--gpus', String(options.gpus))
  if (options.hostProcesses) args.push('--host-processes')
  if (options.nodes !== undefined && options.nodes !== 1) args.push('--nodes', String(options.nodes))
  if (options.hold?.maxHeld !== undefined) args.push('--max-held', String(options.hold.maxHeld))
  if (options.hold?.holdMs !== undefined) args.push('--hold-timeout', `${options.hold.holdMs}ms`)
  return args
}

/** The gateway port: as set, else following the RPC port (paths.ts). */
function gatewayPort(settings: LocalnetStartSettings): number {
  return settings.typed('gatewayPort')?.value ?? defaultGatewayPort(settings.localnet.port)
}
