/**
 * A localnet node's image cache, as a node of the network has one: an operation whose image the node does not hold
 * waits first for a pull, simulated (no registry is asked: real pulls are the runtime's own, `--pull`) for the image's
 * size in the markets file at the pull rate (50 MB/s unless the pullRate setting says; pullScale, 1 but in tests,
 * makes it faster). Once pulled the node holds it: the next job of that image on that node starts at once.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import type {OperationPlan} from '../../node/operation-plan.js'
import type {ContainerRuntime, RunOptions} from '../../node/runtime/runtime.js'

/** How simulated pulls go: MB/s, a speed-up, and each image's size in MB. */
export interface PullSimulation {
  rateMbPerSecond: number
  scale: number
  sizeMb(image: string): number
}

/**
 * The one spelling of an image reference, so `ubuntu:24.04` and `docker.io/library/ubuntu:24.04` are one image: a
 * reference without a registry is Docker Hub's, a bare name is under `library/`, a missing tag is `latest`.
 */
export function canonicalImage(reference: string): string {
  const text = reference.trim()
  const slash = text.indexOf('/')
  const first = slash === -1 ? '' : text.slice(0, slash)
  const hasRegistry = first.includes('.') || first.includes(':') || first === 'localhost'
  let name = hasRegistry ? text : `docker.io/${slash === -1 ? `library/${text}` : text}`
  const lastSegment = name.slice(name.lastIndexOf('/') + 1)
  if (!lastSegment.includes(':') && !lastSegment.includes('@')) name = `${name}:latest`
  return name
}

/** Seconds a pull of `image` waits. */
export function pullSeconds(simulation: PullSimulation, image: string): number {
  return simulation.sizeMb(canonicalImage(image)) / simulation.rateMbPerSecond / simulation.scale
}

/** `runtime` behind a node's image cache (`cached`, which it fills): an image not held waits for its pull first. */
export function withSimulatedPulls(
  runtime: ContainerRuntime,
  cached: Set<string>,
  simulation: PullSimulation,
  log: (line: string) => void,
): ContainerRuntime {
  // Two operations of one job with the same image wait for the one pull.
  const pulling = new Map<string, Promise<void>>()
  const pull = async (plan: OperationPlan, signal: AbortSignal | undefined): Promise<void> => {
    const image = canonicalImage(plan.image)
    if (cached.has(image)) return
    let pending = pulling.get(image)
    if (!pending) {
      const seconds = pullSeconds(simulation, image)
      const size = simulation.sizeMb(image)
      log(`pulling ${image} (${size} MB at ${simulation.rateMbPerSecond} MB/s, simulated): ${seconds.toFixed(1)} s`)
      // Unreferenced: a pull under way never keeps a stopping localnet alive.
      pending = sleep(seconds * 1000, undefined, {ref: false}).then(() => {
        cached.add(image)
        pulling.delete(image)
        log(`pulled ${image}`)
      })
      pulling.set(image, pending)
    }
    // A job ended meanwhile waits no longer (the pull goes on for the next job); its run then stops what starts.
    if (!signal) return pending
    if (signal.aborted) return
    await new Promise<void>((resolve) => {
      signal.addEventListener('abort', () => resolve(), {once: true})
      void pending.then(resolve)
    })
  }
  const wrapped: ContainerRuntime = {
    kind: runtime.kind,
    start: async (plan: OperationPlan, options: RunOptions) => {
      await pull(plan, options.signal)
      return runtime.start(plan, options)
    },
    run: async (plan: OperationPlan, options: RunOptions) => {
      await pull(plan, options.signal)
      return runtime.run(plan, options)
    },
    exec: (op, cmd, options) => runtime.exec(op, cmd, options),
    sample: (op) => runtime.sample(op),
  }
  // No close or reclaim: the runtime is every node's, closed once by its owner (node-agent.ts).
  return wrapped
}
