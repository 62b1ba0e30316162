/** What `deployment scale` says of the replica count it set. */

/** What a replica count means for the deployment, in a phrase. */
export function scaleMeaning(replicas: number): string {
  if (replicas === 0)
    return 'the deployment keeps running with no job; nothing is listed, extended or spent until it is scaled above 0'
  return 'the manager lists the shortfall or stops the excess (queued jobs first, then the oldest running)'
}
