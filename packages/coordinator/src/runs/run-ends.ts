import { EventEmitter } from 'node:events';

/**
 * News that a run ended, for waits on this coordinator (start-sync requests, a worker's WaitRun
 * for a child, a local parent's wait for its child): the local executor tells it when a run it
 * hosts is over and recorded, the report applier when a worker's report here ends one, and a
 * stop or dequeue here that ends a run that had not started. A wait (waitForRun's `wakeOn`) then
 * looks at the run at once instead of at its next poll (WAIT_RUN_POLL_MS). The poll still
 * sees the rest: runs that end through another coordinator, runs failed by the lost-worker
 * check or by a hand-out whose profile cannot be used, and runs that reach Waiting.
 */
export class RunEnds {
  private readonly emitter = new EventEmitter();

  constructor() {
    // One listener per waiting caller: any number at once.
    this.emitter.setMaxListeners(0);
  }

  /** The run is over and its end is stored. */
  ended(dagName: string, dagRunId: string): void {
    this.emitter.emit(endKey(dagName, dagRunId));
  }

  /** A `wakeOn` for waitForRun: subscribes `wake` to this run's end and returns the unsubscribe. */
  wakeOn(dagName: string, dagRunId: string): (wake: () => void) => () => void {
    const key = endKey(dagName, dagRunId);
    return (wake) => {
      this.emitter.on(key, wake);
      return () => this.emitter.off(key, wake);
    };
  }
}

function endKey(dagName: string, dagRunId: string): string {
  return `${dagName}\u0000${dagRunId}`;
}
