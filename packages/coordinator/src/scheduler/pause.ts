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
  async set(paused: boolean, actor: string, reason = '') {
    return pauseBody(await this.db.transaction((tx) => setSchedulerPaused(tx, paused, actor, reason)));
  }
}
