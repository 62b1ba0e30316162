/** How many node agents a localnet runs: the `nodes` setting's one check (`--nodes`, GPUNET_LOCALNET_NODES, config). */

/** The fewest and most node agents a localnet runs. */
export const NODE_COUNT_BOUNDS = {min: 1, max: 16} as const

/** The count a value gives, as text (`"04"` gives `"4"`); `bad` makes the error for anything else. */
export function nodeCount<E extends Error>(value: string, bad: (why: string) => E): string {
  const {min, max} = NODE_COUNT_BOUNDS
  const count = /^\d{1,3}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN
  if (!(count >= min && count <= max))
    throw bad(`must be a whole number of nodes from ${min} to ${max}, not "${value}"`)
  return String(count)
}
