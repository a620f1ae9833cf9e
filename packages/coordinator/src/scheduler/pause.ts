import { recordAudit } from '../auth/audit.js';
import type { Principal } from '../auth/principal.js';
import { getSchedulerState, setSchedulerPaused, type Db, type SchedulerState } from '@trellis/store';

/** The contract's pause body: pausedAt and pausedBy only while paused, reason only when given. */
function pauseBody(state: SchedulerState) {
  if (!state.paused) return { paused: false };
  return {
    paused: true,
    ...(state.pausedAt !== null ? { pausedAt: state.pausedAt.toISOString() } : {}),
    ...(state.pausedBy !== '' ? { pausedBy: state.pausedBy } : {}),
    ...(state.reason !== '' ? { reason: state.reason } : {}),
  };
}

/** Pausing the scheduler: while paused, queued scheduled runs are aborted and missed runs discarded. */
export class SchedulerPause {
  constructor(private readonly db: Db) {}

  async state() {
    return pauseBody(await getSchedulerState(this.db));
  }

  /** `actor` is who asked: users arrive with authentication, until then callers pass anonymous. */
  /** Records who paused or resumed it, on the state and as an audit event. */
  async set(actor: Principal, paused: boolean, reason = '') {
    const state = await this.db.transaction(async (tx) => {
      const changed = await setSchedulerPaused(tx, paused, actor.name, reason);
      await recordAudit(tx, actor, { type: paused ? 'scheduler.paused' : 'scheduler.resumed', message: `${paused ? 'paused' : 'resumed'} the scheduler${reason !== '' ? `: ${reason}` : ''}` });
      return changed;
    });
    return pauseBody(state);
  }
}
