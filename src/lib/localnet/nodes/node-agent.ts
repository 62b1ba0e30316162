/**
 * The localnet's own nodes: each one's keypair in the data directory, the runtime they run jobs with (podman, or
 * host processes when the user turns them on), their GPU count, and the one gateway serving every node's API and
 * the ports their jobs expose.
 */
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {join, resolve} from 'node:path'

import {loadOrCreateKeypair} from '../../keys/wallet.js'
import {NodeAgent, type NodeAgentOptions} from '../../node/agent.js'
import {NodeApi} from '../../node/api-server/server.js'
import {Gateway} from '../../gateway/gateway.js'
import {HostProcessRuntime} from '../../node/runtime/host-process.js'
import {detectRuntime, defaultPodmanDataDir, PodmanRuntime, type PullPolicy} from '../../node/runtime/podman.js'
import type {ContainerRuntime} from '../../node/runtime/runtime.js'
import type {Localnet} from '../state.js'
import type {LocalnetNodeStatus} from '../../market/connect.js'
import {localnetNodeNetwork} from './node-network.js'
import {defaultGatewayHttpsPort, gatewayHttpsPortInUse, gatewayPortInUse, localnetFiles} from '../paths.js'
import {ensureGatewayCertificate} from './certificates.js'
import type {RuntimeChoice} from '../../settings/kinds.js'

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
  /** Node agents, each with its own key and stake, one job at a time each (1 when not given). */
  nodes?: number
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
}

/** How often a running gateway checks whether its certificate is due to be made again. */
const CERTIFICATE_CHECK_MS = 86_400_000

/** The started nodes and their gateway. */
export interface RunningNode {
  /** The first node (the one of `node.json`): what a localnet of one node has always had. */
  agent: NodeAgent
  /** Every node, the first one first. */
  agents: NodeAgent[]
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
 * The keypair file of the localnet's node number `index` (0-based): the first keeps `node.json`, the others are
 * `nodes/node-<index + 1>.json`, so a localnet restarted with the same count comes back with the same keys.
 */
export function nodeKeyFile(dataDir: string, index: number): string {
  const files = localnetFiles(dataDir)
  return index === 0 ? files.node : join(files.nodes, `node-${index + 1}.json`)
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
  options: LocalnetNodeOptions,
  onChange: () => void,
): Promise<RunningNode | {off: string}> {
  const runtime = await chooseRuntime(options, resolve(dataDir))
  if ('off' in runtime) return runtime
  // Only one process holds the data directory (serve.ts' lock): what carries its label now, a killed one left.
  const left = (await runtime.reclaim?.()) ?? []
  if (left.length > 0) options.log?.(`Stopped ${left.join(' and ')}${reclaimedSuffix(dataDir)}`)
  const gateway = new Gateway({
    allowedOrigins: options.allowedOrigins,
    networkNames: {checkIntervalMs: options.groupCheckIntervalMs},
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
  const network = localnetNodeNetwork(localnet)
  const count = options.nodes ?? 1
  const agents: NodeAgent[] = []
  for (let index = 0; index < count; index++) {
    const {keypair} = loadOrCreateKeypair(nodeKeyFile(dataDir, index))
    // The options go first: an unset `gpus` in them (no --gpus) must not hide the detected count.
    const agent = new NodeAgent({...options, network, keypair, runtime, gateway, secretsUrl, gpus, onChange})
    // Its node API, at http://<node>.node.localhost:<gateway port>/, as the network's nodes publish theirs.
    gateway.mountNodeApi(agent.address, new NodeApi(agent))
    agents.push(agent)
  }
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
      agents.map((agent) => {
        const [job = null] = agent.runningJobs
        return {address: agent.address, state: job ? 'running' : 'idle', job}
      }),
    close: async () => {
      clearInterval(renewal)
      for (const agent of agents) await agent.close()
      await gateway.close()
      await runtime.close?.()
    },
  }
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
