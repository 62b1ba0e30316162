/**
 * The load of deployments behind several gateways, each in front of its own manager on one PostgreSQL (`deployment
 * serve --database-url`): every gateway writes its figures to the store each LOAD_WRITE_MS (at once when a request
 * is held), and the manager holding a deployment's lease (scaler.ts decides only under it) reads its own gateway's
 * figures live plus the others' fresh ones, so it decides from all of the deployment's traffic. A gateway that died
 * stops counting once its figures are older than LOAD_FRESH_MS. Each write also says what the gateway has in flight
 * per job, which a drain by another manager waits for (draining.ts).
 */
import type {DeploymentStore} from '../store/store.js'
import type {GatewayTraffic} from './gateway-load.js'
import type {DeploymentLoad, LoadFigures} from './load.js'

/** How often a gateway writes its figures, and reads whether another gateway holds requests. */
export const LOAD_WRITE_MS = 1000
/** Figures older than this are a gateway's that stopped: three writes missed. */
export const LOAD_FRESH_MS = 3 * LOAD_WRITE_MS

/** A DeploymentLoad through the store, and its writes' stop (the manager's close). */
export interface StoreLoad extends DeploymentLoad {
  stop(): Promise<void>
}

/**
 * The load of a manager whose gateway `traffic` (named `gateway` in the store: the manager's lease holder name) shares
 * `store` with other managers' gateways; `idOf` finds a deployment's id from its lowercased form.
 */
export function storeLoad(
  store: Pick<DeploymentStore, 'writeLoad' | 'readLoad' | 'writeJobsInFlight'>,
  traffic: GatewayTraffic,
  gateway: string,
  idOf: (label: string) => Promise<string | null>,
  options: {now?: () => number; log?: (line: string) => void} = {},
): StoreLoad {
  const now = options.now ?? Date.now
  const listeners = new Set<(deployment: string) => void>()
  const tell = (label: string) =>
    void idOf(label)
      .then((id) => {
        if (id !== null) for (const listener of listeners) listener(id)
      })
      .catch(() => {})
  /** Deployments another gateway held requests for at the last read: a new one is told. */
  let heldElsewhere = new Set<string>()
  let failed = false
  let writing: Promise<void> = Promise.resolve()
  const write = () =>
    (writing = writing.then(async () => {
      try {
        await store.writeLoad(gateway, traffic.busy(), now())
        // Written even when empty: a drain by another manager waits for this gateway's next write (draining.ts).
        await store.writeJobsInFlight(gateway, traffic.jobsInFlight(), now())
        const held = new Set(
          (await store.readLoad(LOAD_FRESH_MS, gateway, now())).filter((f) => f.held > 0).map((f) => f.deployment),
        )
        for (const label of held) if (!heldElsewhere.has(label)) tell(label)
        heldElsewhere = held
        failed = false
      } catch (error) {
        // Said once per outage: the next write tries again, and the figures of the others age out meanwhile.
        if (!failed) options.log?.(`gateway load: cannot write to the store: ${(error as Error).message}`)
        failed = true
      }
    }))
  const timer = setInterval(write, LOAD_WRITE_MS)
  timer.unref()
  const unsubscribe = traffic.onHeld((label) => {
    tell(label)
    // The others' managers learn of it with this write, not after a whole interval.
    void write()
  })
  return {
    async load(deployment): Promise<LoadFigures> {
      const label = deployment.toLowerCase()
      const mine = traffic.traffic(label)
      const others = await store.readLoad(LOAD_FRESH_MS, gateway, now(), label)
      return {
        inFlight: others.reduce((sum, f) => sum + f.inFlight, mine.inFlight),
        held: others.reduce((sum, f) => sum + f.held, mine.held),
        at: now(),
      }
    },
    onHeld(listener) {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    async stop() {
      clearInterval(timer)
      unsubscribe()
      await writing
      // Its figures go with it: the others stop counting them at once.
      await store.writeLoad(gateway, [], now()).catch(() => {})
      await store.writeJobsInFlight(gateway, null, now()).catch(() => {})
    },
  }
}
