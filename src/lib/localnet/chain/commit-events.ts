/** The chain's event emitter, which keeps a listener's failure away from the commit that emitted the event. */
import {EventEmitter} from 'node:events'

/**
 * An EventEmitter whose `emit` calls every listener even when one throws, and never throws itself: a commit
 * has landed by the time it is announced, so a subscriber's failure must not turn its answer into an error
 * (a client would pay again). Each subscriber handles its own failures (websocket.ts drops the subscription).
 */
export class CommitEvents extends EventEmitter {
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    const listeners = this.rawListeners(event)
    for (const listener of listeners) {
      try {
        ;(listener as (...a: unknown[]) => unknown).apply(this, args)
      } catch {
        // the subscriber's own affair; the commit stands
      }
    }
    return listeners.length > 0
  }
}
