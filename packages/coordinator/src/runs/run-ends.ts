import { EventEmitter } from 'node:events';

/**
 * News that a run ended, for waits on this coordinator: the local executor tells it when a run
 * it hosts is over and recorded, the report applier when a worker's report here ends one. A wait
 * (waitForRun's `wakeOn`) then looks at the run at once instead of at its next poll, 200 ms
 * later at worst. Runs that end through another coordinator are still seen by the poll.
 */
export class RunEnds {
  private readonly emitter = new EventEmitter();

  constructor() {
    // One listener per waiting caller (start-sync requests, parents waiting for children): any number at once.
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
