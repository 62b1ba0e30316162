/**
 * The load of a manager's deployments as the gateway in the same process sees it (the localnet's gateway and its
 * manager, `deployment serve`'s gateway and its manager): the gateway's counts read live, its held requests told
 * at once. Host names are lowercased and deployment ids base58 (mixed case): the ids come from the store.
 */
import type {DeploymentLoad, LoadFigures} from './load.js'

/** What the load takes of a gateway: its counts by deployment (lowercased) and its held requests as they come. */
export interface GatewayTraffic {
  traffic(deployment: string): {inFlight: number; held: number}
  /** Every deployment with traffic now: what a gateway writes to a shared store. */
  busy(): {deployment: string; inFlight: number; held: number}[]
  /** Its requests in flight per job (lowercased), those with none left out: what a drain elsewhere waits for. */
  jobsInFlight(): Record<string, number>
  onHeld(listener: (deployment: string) => void): () => void
}

/** The DeploymentLoad of one gateway in this process, its held requests told with the deployment's id. */
export function gatewayLoad(
  gateway: GatewayTraffic,
  idOf: (label: string) => Promise<string | null>,
  now: () => number = Date.now,
): DeploymentLoad {
  return {
    async load(deployment): Promise<LoadFigures> {
      return {...gateway.traffic(deployment.toLowerCase()), at: now()}
    },
    onHeld(listener) {
      return gateway.onHeld((label) => {
        void idOf(label)
          .then((id) => id !== null && listener(id))
          .catch(() => {})
      })
    },
  }
}
