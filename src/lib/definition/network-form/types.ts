/**
 * The job definition as the live network's nodes read it (@nosana/types 2.1.6), in the loose shape gpunet needs:
 * the bundled validator decides what is valid, so these types only name what gpunet reads or writes.
 */

/** One operation of a network-form definition. */
export interface NetworkOperation {
  id: string
  type: string
  args: Record<string, unknown>
  [member: string]: unknown
}

/** A definition in the network's form: spec 0.1's top level plus the network's newer members. */
export interface NetworkDefinition {
  version: string
  type: string
  meta?: Record<string, unknown>
  global?: Record<string, unknown>
  ops: NetworkOperation[]
  [member: string]: unknown
}
