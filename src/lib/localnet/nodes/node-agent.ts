/**
 * The localnet's own nodes: each one's keypair in the data directory, the runtime they run jobs with (podman, or
 * host processes when the user turns them on), their GPU count, and the one gateway serving every node's API and
 * the ports their jobs expose.
 */
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {join, resolve} from 'node:path'

import {PublicKey} from '@solana/web3.js'

import {loadOrCreateKeypair} from '../../keys/wallet.js'
import {NodeAgent, type NodeAgentOptions} from '../../node/agent.js'
import {NodeApi} from '../../node/api-server/server.js'
import {Gateway} from '../../gateway/gateway.js'
import type {HoldBounds} from '../../gateway/holding.js'
import {HostProcessRuntime} from '../../node/runtime/host-process.js'
import {detectRuntime, defaultPodmanDataDir, PodmanRuntime, type PullPolicy} from '../../node/runtime/podman.js'
import type {ContainerRuntime} from '../../node/runtime/runtime.js'
import type {Localnet} from '../state.js'
import type {LocalnetNodeStatus} from '../../market/connect.js'
import {localnetNodeNetwork} from './node-network.js'
import {defaultGatewayHttpsPort, gatewayHttpsPortInUse, gatewayPortInUse, localnetFiles} from '../paths.js'
import {ensureGatewayCertificate} from './certificates.js'
import type {RuntimeChoice} from '../../settings/kinds.js'
import {DEFAULT_MARKET_SLUG, NODE_DEFAULTS, type NodeSpec} from '../markets/spec.js'
import type {OpenedMarket} from '../markets/record.js'
import {canonicalImage, type PullSimulation, withSimulatedPulls} from './simulated-pull.js'

/** How the localnet's node runs. */
export interface LocalnetNodeOptions {
  /** GPUs the node says it has; detected (an NVIDIA device) when not given. */
  gpus?: number
  /** Runs jobs as plain host processes when podman cannot run here (no isolation; every result says so). */
  hostProcesses?: boolean
  /** Which runtime: podman when it works else host processes if allowed (`auto`), podman only, or the host. */
  runtime?: RuntimeChoice
  /** When podman may pull images: `never` where no registry can be reached. */
  pull?: PullPolicy
  /** The podman executable (`podman` on the PATH). */
  podman?: string
  /** Gateway port on 127.0.0.1; 0 picks a free one. */
  gatewayPort: number
  /** The gateway's https port on 127.0.0.1; 0 picks a free one; unset, the one after `gatewayPort` (paths.ts). */
  gatewayHttpsPort?: number
  /** The default market's node agents, each with its own key and stake, one job at a time each (the markets' count when not given). */
  nodes?: number
  /** How simulated image pulls go (simulated-pull.ts); sizes from the markets. */
  pullSimulation?: {rateMbPerSecond: number; scale: number}
  readyTimeoutMs?: number
  healthIntervalMs?: number
  /** How often an up port's continuous health checks run again (30 s, as on the network's nodes). */
  continuousIntervalMs?: number
  /** Size cap, timeout and Hugging Face endpoint of the resources jobs download. */
  resources?: NodeAgentOptions['resources']
  /** Browser origins the gateway allows besides a page's own (the allowOrigin setting). */
  allowedOrigins?: readonly string[]
  /** How often the gateway checks a load-balancer group's members (10 s, frpc's default; shorter in tests). */
  groupCheckIntervalMs?: number
  /** The gateway's bounds on requests held while a deployment starts from zero (the maxHeld and holdTimeout settings). */
  hold?: Partial<HoldBounds>
  log?: (line: string) => void
}

/** The node's part of `localnet status` (the client's type: market/connect.ts). */
export type {LocalnetNodeStatus}

/** One node agent of the localnet as `localnet status` lists it. */
export interface LocalnetNodeEntry {
  address: string
  state: 'idle' | 'running'
  /** The job it runs; null when idle. */
  job: string | null
  /** The market it serves: its address and slug. */
  market: string
  slug: string
  /** Out of its market's queue (`localnet node leave`): it takes no job until it joins. */
  left: boolean
  /** What it reports as the network's nodes do: GPU model, VRAM and RAM in GB, country. */
  gpu: string
  vram: number
  ram: number
  country: string
}

/** A started node agent with the market it serves and what it is. */
export interface MarketNode {
  agent: NodeAgent
  market: OpenedMarket
  spec: NodeSpec
}

/** How often a running gateway checks whether its certificate is due to be made again. */
const CERTIFICATE_CHECK_MS = 86_400_000

/** The started nodes and their gateway. */
export interface RunningNode {
  /** The first node (the one of `node.json`): what a localnet of one node has always had. */
  agent: NodeAgent
  /** Every node, the first one first. */
  agents: NodeAgent[]
  /** Every node with its market and description, the default market's first. */
  marketNodes: MarketNode[]
  gateway: Gateway
  /** The certificate authority's file: the one a client trusts for the gateway's https side. */
  caFile: string
  /** The first node's status, with the runtime and GPUs every node shares. */
  status(): LocalnetNodeStatus
  /** Every node, idle or running which job. */
  nodes(): LocalnetNodeEntry[]
  close(): Promise<void>
}

/**
 * The keypair file of the localnet's node number `index` (0-based) of a market: the default market's first keeps
 * `node.json`, its others are `nodes/node-<index + 1>.json`, another market's `nodes/<slug>-<index + 1>.json`, so a
 * localnet restarted with the same count comes back with the same keys.
 */
export function nodeKeyFile(dataDir: string, index: number, slug: string = DEFAULT_MARKET_SLUG): string {
  const files = localnetFiles(dataDir)
  if (slug !== DEFAULT_MARKET_SLUG) return join(files.nodes, `${slug}-${index + 1}.json`)
  return index === 0 ? files.node : join(files.nodes, `node-${index + 1}.json`)
}

/** The key files of a market's nodes from `from` (0-based) on, other than the default market's: none run now. */
export function marketNodeKeyFilesFrom(dataDir: string, slug: string, from: number): string[] {
  const files = localnetFiles(dataDir)
  if (!existsSync(files.nodes)) return []
  const pattern = new RegExp(`^${slug}-(\\d+)\\.json$`)
  return readdirSync(files.nodes)
    .map((name) => pattern.exec(name))
    .filter((m): m is RegExpExecArray => m !== null && Number(m[1]) - 1 >= from)
    .map((m) => join(files.nodes, m[0]))
}

/** The key files of nodes a localnet ran before, from `from` (0-based) on: they must not wait in the queue now. */
export function nodeKeyFilesFrom(dataDir: string, from: number): string[] {
  const files = localnetFiles(dataDir)
  const extra = existsSync(files.nodes)
    ? readdirSync(files.nodes)
        .map((name) => /^node-(\d+)\.json$/.exec(name))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => Number(m[1]) - 1)
    : []
  const indexes = [...(existsSync(files.node) ? [0] : []), ...extra].filter((i) => i >= from)
  return indexes.sort((a, b) => a - b).map((i) => nodeKeyFile(dataDir, i))
}

/** GPUs found on this machine: NVIDIA devices. */
export function detectGpus(): number {
  let count = 0
  while (existsSync(`/dev/nvidia${count}`)) count++
  return count
}

/** How the line a start logs when it ended what a killed localnet left running ends. */
function reclaimedSuffix(dataDir: string): string {
  return ` a crashed localnet of ${dataDir} left running.`
}

/**
 * The lines of a background localnet's log (`log`) that say what it ended of a killed one's, for
 * `localnet start --detach` to repeat: the user would not see them otherwise.
 */
export function reclaimedLines(log: string, dataDir: string): string[] {
  let text: string
  try {
    text = readFileSync(log, 'utf8')
  } catch {
    return []
  }
  // Each line starts with its ISO time (nodeOptions' log).
  return text
    .split('\n')
    .map((line) => line.replace(/^\S+ /, ''))
    .filter((line) => line.startsWith('Stopped ') && line.endsWith(reclaimedSuffix(dataDir)))
}

/** Starts the node agents and their one gateway, or says why the nodes are off (no runtime they may use). */
export async function startNode(
  localnet: Localnet,
  dataDir: string,
  secretsUrl: string,
  markets: {markets: OpenedMarket[]; images: {sizes: Record<string, number>; defaultSize: number}},
  options: LocalnetNodeOptions,
  onChange: () => void,
): Promise<RunningNode | {off: string}> {
  const {images} = markets
  if (markets.markets.length === 0) throw new Error('a localnet has its default market at least')
  const runtime = await chooseRuntime(options, resolve(dataDir))
  if ('off' in runtime) return runtime
  // Only one process holds the data directory (serve.ts' lock): what carries its label now, a killed one left.
  const left = (await runtime.reclaim?.()) ?? []
  if (left.length > 0) options.log?.(`Stopped ${left.join(' and ')}${reclaimedSuffix(dataDir)}`)
  const gateway = new Gateway({
    allowedOrigins: options.allowedOrigins,
    networkNames: {checkIntervalMs: options.groupCheckIntervalMs},
    hold: options.hold,
  })
  try {
    await gateway.listen(options.gatewayPort)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error
    throw gatewayPortInUse(options.gatewayPort)
  }
  const httpsPort = options.gatewayHttpsPort ?? defaultGatewayHttpsPort(options.gatewayPort)
  let certificate
  try {
    certificate = await ensureGatewayCertificate(dataDir)
    await gateway.listenHttps(httpsPort, certificate)
  } catch (error) {
    await gateway.close()
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error
    throw gatewayHttpsPortInUse(httpsPort)
  }
  if (certificate.made.ca) options.log?.(`Made the localnet's certificate authority, ${certificate.caFile}.`)
  // A localnet that runs for months: its certificate is made again once it nears its end (the authority stays).
  const renewal = setInterval(() => {
    ensureGatewayCertificate(dataDir).then(
      (renewed) => renewed.made.cert && gateway.renewCertificate(renewed),
      (error: Error) => options.log?.(`Could not renew the gateway's certificate: ${error.message}`),
    )
  }, CERTIFICATE_CHECK_MS)
  renewal.unref()
  const gpus = options.gpus ?? detectGpus()
  const simulation = options.pullSimulation ?? {rateMbPerSecond: 50, scale: 1}
  const sizes = new Map(Object.entries(images.sizes).map(([image, mb]) => [canonicalImage(image), mb]))
  const pulls: PullSimulation = {...simulation, sizeMb: (image) => sizes.get(image) ?? images.defaultSize}
  const marketNodes: MarketNode[] = []
  for (const market of markets.markets) {
    const network = localnetNodeNetwork(localnet, new PublicKey(market.address))
    // --nodes N is the default market's count; a markets file gives each market's.
    const specs =
      market.slug === DEFAULT_MARKET_SLUG && options.nodes !== undefined
        ? Array.from({length: options.nodes}, (_, i) => market.nodes[i] ?? market.nodes[0] ?? defaultNode(market))
        : market.nodes
    for (const [index, spec] of specs.entries()) {
      const {keypair} = loadOrCreateKeypair(nodeKeyFile(dataDir, index, market.slug))
      const cache = new Set(spec.cached.map(canonicalImage))
      const address = keypair.publicKey.toBase58()
      const nodeRuntime = withSimulatedPulls(runtime, cache, pulls, (line) => options.log?.(`node ${address}: ${line}`))
      // The options go first: an unset `gpus` in them (no --gpus) must not hide the detected count.
      const agent = new NodeAgent({
        ...options,
        network,
        keypair,
        runtime: nodeRuntime,
        gateway,
        secretsUrl,
        gpus,
        onChange,
      })
      // Its node API, at http://<node>.node.localhost:<gateway port>/, as the network's nodes publish theirs.
      gateway.mountNodeApi(agent.address, new NodeApi(agent))
      marketNodes.push({agent, market, spec})
    }
  }
  const agents = marketNodes.map((node) => node.agent)
  try {
    // One after the other: each takes the head job or joins the queue, and the chain is one.
    for (const agent of agents) await agent.start()
  } catch (error) {
    clearInterval(renewal)
    for (const agent of agents) await agent.close()
    await gateway.close()
    await runtime.close?.()
    throw error
  }
  const [first] = agents as [NodeAgent, ...NodeAgent[]]
  return {
    agent: first,
    agents,
    marketNodes,
    gateway,
    caFile: certificate.caFile,
    status: () => ({
      address: first.address,
      gpus,
      runtime: runtime.kind,
      runtimeChoice: options.runtime ?? 'auto',
      runningJobs: first.runningJobs,
    }),
    nodes: () =>
      marketNodes.map(({agent, market, spec}) => {
        const [job = null] = agent.runningJobs
        return {
          address: agent.address,
          state: job ? 'running' : 'idle',
          job,
          market: market.address,
          slug: market.slug,
          left: agent.left,
          gpu: spec.gpu,
          vram: spec.vram,
          ram: spec.ram,
          country: spec.country,
        }
      }),
    close: async () => {
      clearInterval(renewal)
      for (const agent of agents) await agent.close()
      await gateway.close()
      await runtime.close?.()
    },
  }
}

/** A node as its market describes them, for a default market given more nodes (--nodes) than the file has. */
function defaultNode(market: OpenedMarket): NodeSpec {
  return {gpu: market.gpus[0]!, vram: market.vram, ram: NODE_DEFAULTS.ram, country: NODE_DEFAULTS.country, cached: []}
}

/** The runtime the node uses; `owner` (the data directory) labels its containers. */
async function chooseRuntime(options: LocalnetNodeOptions, owner: string): Promise<ContainerRuntime | {off: string}> {
  const choice = options.runtime ?? 'auto'
  // Asked for by name: the host's processes, even where podman works (no isolation; every result says so).
  if (choice === 'host') return new HostProcessRuntime({allowHostProcesses: true, owner})
  const dataDir = defaultPodmanDataDir()
  const podman = await detectRuntime({dataDir, podman: options.podman})
  if (podman.available) return new PodmanRuntime({dataDir, pull: options.pull, podman: options.podman, owner})
  if (choice === 'podman') return {off: `${podman.reason} --runtime podman runs jobs in podman only.`}
  if (options.hostProcesses) return new HostProcessRuntime({allowHostProcesses: true, owner})
  return {
    off: `${podman.reason} Without a container runtime the node runs no jobs; --host-processes (GPUNET_NODE_HOST_PROCESSES=1) runs them on the host when podman cannot, and --runtime host always, both without isolation.`,
  }
}
