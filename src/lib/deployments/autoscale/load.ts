/**
 * The seam between the gateways in front of a manager and its autoscaling (docs/deployments.md, "Autoscaling"):
 * the traffic of a deployment as the gateways see it, which only they can (on the network, requests go to its own
 * load-balanced URL and gpunet never sees them). The localnet's gateway answers in process; `deployment serve`'s
 * gateway in process too; several managers on one PostgreSQL read what every gateway wrote to the store, so the
 * manager holding a deployment's lease decides from all of its traffic.
 */

/** A deployment's traffic now, summed over the gateways in front of it. */
export interface LoadFigures {
  /** Requests sent to a replica and not yet answered in full (open streams included). */
  inFlight: number
  /** Requests waiting for a replica to become ready (a deployment at 0 replicas, or all of them starting). */
  held: number
  /** When the figures were read (ms since the epoch). */
  at: number
}

/** Where a manager reads its deployments' traffic. */
export interface DeploymentLoad {
  /** The deployment's traffic now (zeros when no gateway saw any). */
  load(deployment: string): Promise<LoadFigures>
  /**
   * Calls `listener` with a deployment's id as soon as a request is held for it, so the manager decides on its next
   * tick rather than after its poll; answers a function that stops the calls.
   */
  onHeld(listener: (deployment: string) => void): () => void
}

/**
 * The manager's answer to the gateways in front of it: true when a request to the deployment (its id) waits for a
 * replica instead of a 503 at once while none is ready, i.e. its policy has a minimum of 0 replicas (the request is
 * what scales it up from zero). The manager sets it in its context (context.ts) where it knows the policies; absent,
 * no request is ever held.
 */
export type HoldsAtZero = (deployment: string) => Promise<boolean>
