import { NodeStatus } from '@trellis/core/protocol';
import type { RunSnapshot } from '@trellis/engine';

/**
 * When a parent run lends its slot to another poller: while it waits for at least one sub-DAG
 * child and runs no step of its own. A parent waiting on children executes nothing, yet with
 * every slot held by such parents, children placed on this worker would queue forever; but a
 * step running alongside the wait (graph DAGs run independent steps together) still uses the
 * slot, and lending it then would run more than the worker's pollers at once.
 */
export class SlotLoan {
  private waiting = 0;
  private latest: RunSnapshot | undefined;
  private endLoan: (() => void) | undefined;

  /** `lend` lends the slot and returns the end of the loan. */
  constructor(private readonly lend: () => () => void) {}

  waitBegins(): void {
    this.waiting += 1;
    this.sync();
  }

  waitEnds(): void {
    this.waiting -= 1;
    this.sync();
  }

  /** Each engine snapshot says which steps of the run are running now. */
  observe(snapshot: RunSnapshot): void {
    this.latest = snapshot;
    // Most runs never wait for a child: their snapshots cost nothing more here.
    if (this.waiting > 0 || this.endLoan !== undefined) this.sync();
  }

  private ownStepsRunning(): boolean {
    const { nodes = [], handlers = {} } = this.latest ?? {};
    return [...nodes, ...Object.values(handlers)].some((n) => n.status === NodeStatus.Running && n.step.run === '');
  }

  private sync(): void {
    const lendable = this.waiting > 0 && !this.ownStepsRunning();
    if (lendable && this.endLoan === undefined) {
      this.endLoan = this.lend();
    } else if (!lendable && this.endLoan !== undefined) {
      this.endLoan();
      this.endLoan = undefined;
    }
  }
}
