/**
 * What a running localnet was started with (its runtime record's `startArgs`, the flags nodeArgs and contentArgs
 * wrote), against what a second `localnet start` asks for: a flag given that the running one does not honour is
 * said, not dropped (`localnet start --pull never` on a localnet pulling missing images exited 0, issue 59).
 */
import {DRAIN_TIMEOUT_MS} from '../../deployments/draining.js'
import {HOLD_MS, MAX_HELD} from '../../gateway/holding.js'
import {DEFAULT_CONTENT_MAX_BYTES} from '../../ipfs/store.js'
import {durationMs} from '../../text/durations.js'

/** The settings a localnet's `startArgs` say. */
export interface StartSettings {
  node: boolean
  runtime: string | null
  gatewayPort: number | null
  gatewayHttpsPort: number | null
  pull: string | null
  gpus: number | null
  hostProcesses: boolean
  nodes: number
  contentMaxBytes: number
  /** The drain bound, ms. */
  drainTimeoutMs: number
  /** The gateway's hold bounds: requests held per deployment starting from zero, and how long each (ms). */
  maxHeld: number
  holdMs: number
}

/** Reads `startArgs` (`--runtime auto --gateway-port 28980 --pull missing ...`, or `--no-node`) back. */
export function readStartArgs(args: readonly string[]): StartSettings {
  const value = (flag: string): string | null => {
    const at = args.indexOf(flag)
    return at === -1 || at + 1 >= args.length ? null : args[at + 1]!
  }
  const number = (flag: string): number | null => {
    const text = value(flag)
    return text === null || !Number.isFinite(Number(text)) ? null : Number(text)
  }
  return {
    node: !args.includes('--no-node'),
    runtime: value('--runtime'),
    gatewayPort: number('--gateway-port'),
    gatewayHttpsPort: number('--gateway-https-port'),
    pull: value('--pull'),
    gpus: number('--gpus'),
    hostProcesses: args.includes('--host-processes'),
    nodes: number('--nodes') ?? 1,
    contentMaxBytes: number('--content-max-bytes') ?? DEFAULT_CONTENT_MAX_BYTES,
    drainTimeoutMs: durationMs(value('--drain-timeout') ?? '') ?? DRAIN_TIMEOUT_MS,
    maxHeld: number('--max-held') ?? MAX_HELD,
    holdMs: durationMs(value('--hold-timeout') ?? '') ?? HOLD_MS,
  }
}

/** A flag given to `localnet start` that the localnet already running does not run with. */
export interface StartDifference {
  /** The flag's name, without dashes (`pull`). */
  flag: string
  /** As the running localnet has it (`--pull missing`). */
  running: string
  /** As it was given (`--pull never`). */
  given: string
}

/** The running localnet: its `startArgs`, and the ports it listens on (the gateway's null when it has none). */
export interface RunningStart {
  args: readonly string[]
  port: number
  gatewayPort: number | null
  /** Its gateway's https port; absent or null when it has none (or a localnet from before https). */
  gatewayHttpsPort?: number | null
}

/** What the second start asks for: its own `startArgs`, its RPC port, and which flags the user gave (or set). */
export interface WantedStart {
  args: readonly string[]
  port: number
  given: ReadonlySet<string>
}

/** The node's flags, as `localnet start` names them, with how each reads from StartSettings. */
const NODE_FLAGS: [flag: string, shown: (s: StartSettings) => string][] = [
  ['runtime', (s) => `--runtime ${s.runtime ?? 'auto'}`],
  ['pull', (s) => `--pull ${s.pull ?? 'missing'}`],
  ['gpus', (s) => (s.gpus === null ? 'GPUs detected (no --gpus)' : `--gpus ${s.gpus}`)],
  ['host-processes', (s) => (s.hostProcesses ? '--host-processes' : 'no --host-processes')],
  ['nodes', (s) => `--nodes ${s.nodes}`],
  // The gateway's, which runs with the nodes.
  ['max-held', (s) => `--max-held ${s.maxHeld}`],
  ['hold-timeout', (s) => `--hold-timeout ${seconds(s.holdMs)}`],
]

/**
 * The flags given that differ from what the running localnet runs with; none for a flag left to its default, a
 * port of 0 (any free one) or --ids (the chain keeps its own, which `localnet start` notes).
 */
export function startDifferences(running: RunningStart, wanted: WantedStart): StartDifference[] {
  const have = readStartArgs(running.args)
  const want = readStartArgs(wanted.args)
  const differences: StartDifference[] = []
  const differ = (flag: string, was: string, now: string) => {
    if (wanted.given.has(flag) && was !== now) differences.push({flag, running: was, given: now})
  }
  differ('port', `--port ${running.port}`, wanted.port === 0 ? `--port ${running.port}` : `--port ${wanted.port}`)
  differ('node', have.node ? '--node' : '--no-node', want.node ? '--node' : '--no-node')
  differ(
    'content-max-bytes',
    `--content-max-bytes ${have.contentMaxBytes}`,
    `--content-max-bytes ${want.contentMaxBytes}`,
  )
  differ(
    'drain-timeout',
    `--drain-timeout ${seconds(have.drainTimeoutMs)}`,
    `--drain-timeout ${seconds(want.drainTimeoutMs)}`,
  )
  // Asked for no node, its flags have nothing to apply to; asked of a localnet without one, none of them applies.
  if (!want.node) return differences
  for (const [flag, shown] of NODE_FLAGS) differ(flag, have.node ? shown(have) : '--no-node', shown(want))
  if (!have.node) return differences
  const gatewayWanted = want.gatewayPort
  if (running.gatewayPort !== null && gatewayWanted !== null && gatewayWanted !== 0) {
    differ('gateway-port', `--gateway-port ${running.gatewayPort}`, `--gateway-port ${gatewayWanted}`)
  }
  const httpsRunning = running.gatewayHttpsPort ?? null
  const httpsWanted = want.gatewayHttpsPort
  if (httpsRunning !== null && httpsWanted !== null && httpsWanted !== 0) {
    differ('gateway-https-port', `--gateway-https-port ${httpsRunning}`, `--gateway-https-port ${httpsWanted}`)
  }
  return differences
}

/** A bound in ms as a duration the flag takes back: whole seconds when it is some. */
function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`
}
