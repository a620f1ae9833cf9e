/**
 * How many other coordinators share the database, as the worker monitor last counted them. A
 * queued run notifies the others only when there are any. Until the first count, peers are
 * assumed: a notification too many costs little, one too few leaves a run waiting for the sweep.
 */
export class Peers {
  private count: number | undefined;

  /** The worker monitor's count after each check. */
  readonly update = (count: number): void => {
    this.count = count;
  };

  readonly any = (): boolean => this.count !== 0;
}
