/**
 * The node API's resource figures (node.openapi.json, TaskStat), shared by `job stats` and the localnet's node:
 * `GET /job/<job>/stats` answers `TaskStat[]`, `/job/<job>/stats/stream` sends one `TaskStat[]` per event. The
 * network's nodes always send numbers; the localnet's send null for a figure it cannot tell for the job alone.
 */

/** One operation's figures at one time. CPU: 100 is one core busy. Bytes for memory, disk and network. */
export interface TaskStat {
  opId: string
  /** Unix ms. */
  timestamp: number
  cpu: {cpu_percent: number | null}
  memory: {memory_usage: number | null; memory_limit: number | null; memory_percent: number | null}
  disk: {read: number | null; write: number | null}
  network: {received: number | null; sent: number | null}
}

/** The stats routes of a job, relative to the node's API base URL. */
export function statsPath(job: string, stream: boolean, intervalS?: number): string {
  const query = intervalS === undefined ? '' : `?interval=${intervalS}`
  return `/job/${job}/stats${stream ? '/stream' : ''}${query}`
}
