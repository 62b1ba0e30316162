/** How often a node re-runs an up port's continuous health checks: the network's nodes' 30 s (the localnet's too). */
export const DEFAULT_CONTINUOUS_INTERVAL_MS = 30_000
