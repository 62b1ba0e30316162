/**
 * Which jobs a scale-down stops, as the network's manager chooses them (its selectJobsToStop): QUEUED jobs first
 * (nothing runs on them yet, so cancelling them costs no work), then the oldest RUNNING ones; within each group the
 * oldest first. Every strategy that trims its replicas takes this one order.
 */
import type {JobOnChain} from './plan.js'

/** The `count` jobs of `jobs` a scale-down stops, in the order they are stopped. */
export function selectJobsToStop(jobs: readonly JobOnChain[], count: number): JobOnChain[] {
  if (count <= 0) return []
  const queuedFirst = (job: JobOnChain) => (job.state === 'QUEUED' ? 0 : 1)
  // A running job's age is its start on chain; a queued one has none yet, only when it was listed.
  const since = (job: JobOnChain) =>
    job.state === 'RUNNING' && job.timeStart > 0 ? job.timeStart * 1000 : job.created_at
  return [...jobs]
    .sort((a, b) => queuedFirst(a) - queuedFirst(b) || since(a) - since(b) || a.created_at - b.created_at)
    .slice(0, count)
}
