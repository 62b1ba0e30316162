/**
 * What the node API and the node that serves it share: a job's exposed ports as the API lists them, the control
 * requests the poster may send to a running job, and what the API may do with a running operation. The API's
 * server, its `/exec` and `/stats` routes and the node's job runs all import these from here (none from another).
 */
import type {ExecOptions, ExecProcess} from '../runtime/exec.js'
import type {ResourceSample} from '../runtime/stats.js'

/** An exposed port of a job, as `/job/<job>/endpoints` lists it (the network's EndpointSecret). */
export interface Endpoint {
  opID: string
  port: number
  url: string
  status: 'ONLINE' | 'OFFLINE'
}

/** An operation (in `group`, when named) or a whole group of the job. */
export type ControlTarget = {op: string; group?: string} | {group: string}

/** What the poster may do to one operation or group of a running job through the node API. */
export type ControlAction = 'restart' | 'stop'

/** The answer to a control request: done, or why not (`unknown`: no such operation or group; `idle`: not running). */
export type ControlVerdict = {ok: true; ops: string[]} | {ok: false; why: 'unknown' | 'idle'; message: string}

/** What the node API may do with a running operation. */
export interface OperationAccess {
  /** Runs a command inside it. */
  exec(cmd: readonly string[], options: ExecOptions): ExecProcess
  /** Its resource counters now; null when they cannot be read. */
  sample(): Promise<ResourceSample | null>
}
