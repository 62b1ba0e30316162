/**
 * The localnet's own node: its keypair in the data directory, the runtime it runs jobs with (podman, or host
 * processes when the user turns them on), its GPU count, and the gateway serving the ports its jobs expose.
 */
import {existsSync} from 'node:fs'

import {loadOrCreateKeypair} from '../wallet.js'
import {NodeAgent, type NodeAgentOptions} from '../node/agent.js'
import {NodeApi} from '../node/api/server.js'
import {Gateway} from '../node/gateway.js'
import {HostProcessRuntime} from '../node/runtime/host-process.js'
import {detectRuntime, defaultPodmanDataDir, PodmanRuntime, type PullPolicy} from '../node/runtime/podman.js'
import type {ContainerRuntime} from '../node/runtime/runtime.js'
import type {Localnet} from './node.js'
import type {LocalnetNodeStatus} from '../market/connect.js'
import {localnetNodeNetwork} from './node-network.js'
import {gatewayPortInUse, localnetFiles} from './paths.js'
import type {RuntimeChoice} from './runtime-choice.js'

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
  readyTimeoutMs?: number
  healthIntervalMs?: number
  /** How often an up port's continuous health checks run again (30 s, as on the network's nodes). */
  continuousIntervalMs?: number
  /** Size cap, timeout and Hugging Face endpoint of the resources jobs download. */
  resources?: NodeAgentOptions['resources']
  log?: (line: string) => void
}

/** The node's part of `localnet status` (the client's type: market/connect.ts). */
export type {LocalnetNodeStatus}

/** A started node and its gateway. */
export interface RunningNode {
  agent: NodeAgent
  gateway: Gateway
  status(): LocalnetNodeStatus
  close(): Promise<void>
}

/** GPUs found on this machine: NVIDIA devices. */
export function detectGpus(): number {
  let count = 0
  while (existsSync(`/dev/nvidia${count}`)) count++
  return count
}

/** Starts the node agent and its gateway, or says why the node is off (no runtime it may use). */
export async function startNode(
  localnet: Localnet,
  dataDir: string,
  secretsUrl: string,
  options: LocalnetNodeOptions,
  onChange: () => void,
): Promise<RunningNode | {off: string}> {
  const runtime = await chooseRuntime(options)
  if ('off' in runtime) return runtime
  const gateway = new Gateway()
  try {
    await gateway.listen(options.gatewayPort)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error
    throw gatewayPortInUse(options.gatewayPort)
  }
  const {keypair} = loadOrCreateKeypair(localnetFiles(dataDir).node)
  const gpus = options.gpus ?? detectGpus()
  // The options go first: an unset `gpus` in them (no --gpus) must not hide the detected count.
  const network = localnetNodeNetwork(localnet)
  const agent = new NodeAgent({...options, network, keypair, runtime, gateway, secretsUrl, gpus, onChange})
  // Its node API, at http://<node>.node.localhost:<gateway port>/, as the network's nodes publish theirs.
  gateway.mountNodeApi(agent.address, new NodeApi(agent))
  try {
    await agent.start()
  } catch (error) {
    await gateway.close()
    throw error
  }
  return {
    agent,
    gateway,
    status: () => ({
      address: keypair.publicKey.toBase58(),
      gpus,
      runtime: runtime.kind,
      runtimeChoice: options.runtime ?? 'auto',
      runningJobs: agent.runningJobs,
    }),
    close: async () => {
      await agent.close()
      await gateway.close()
    },
  }
}

async function chooseRuntime(options: LocalnetNodeOptions): Promise<ContainerRuntime | {off: string}> {
  const choice = options.runtime ?? 'auto'
  // Asked for by name: the host's processes, even where podman works (no isolation; every result says so).
  if (choice === 'host') return new HostProcessRuntime({allowHostProcesses: true})
  const dataDir = defaultPodmanDataDir()
  const podman = await detectRuntime({dataDir, podman: options.podman})
  if (podman.available) return new PodmanRuntime({dataDir, pull: options.pull, podman: options.podman})
  if (choice === 'podman') return {off: `${podman.reason} --runtime podman runs jobs in podman only.`}
  if (options.hostProcesses) return new HostProcessRuntime({allowHostProcesses: true})
  return {
    off: `${podman.reason} Without a container runtime the node runs no jobs; --host-processes (GPUNET_NODE_HOST_PROCESSES=1) runs them on the host when podman cannot, and --runtime host always, both without isolation.`,
  }
}
