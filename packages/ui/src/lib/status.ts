/** Run status integers of the contract, with the words the UI shows. */
const RUN_STATUS: Record<number, string> = {
  0: 'not started',
  1: 'running',
  2: 'failed',
  3: 'aborted',
  4: 'succeeded',
  5: 'queued',
  6: 'partially succeeded',
  7: 'waiting',
  8: 'rejected',
};

const NODE_STATUS: Record<number, string> = {
  0: 'not started',
  1: 'running',
  2: 'failed',
  3: 'cancelled',
  4: 'succeeded',
  5: 'skipped',
};

/** The colour class of a status word (one palette for runs and steps). */
const TONE: Record<string, string> = {
  'not started': 'idle',
  running: 'running',
  failed: 'failed',
  aborted: 'aborted',
  cancelled: 'aborted',
  succeeded: 'ok',
  queued: 'queued',
  'partially succeeded': 'partial',
  waiting: 'waiting',
  rejected: 'failed',
  skipped: 'idle',
};

export const runStatusWord = (status: number): string => RUN_STATUS[status] ?? `status ${status}`;
export const nodeStatusWord = (status: number): string => NODE_STATUS[status] ?? `status ${status}`;
export const toneOf = (word: string): string => TONE[word] ?? 'idle';

export const RUN_STATUSES = Object.entries(RUN_STATUS).map(([value, word]) => ({ value: Number(value), word }));

/** Runs that can still change. */
export const isLiveRun = (status: number): boolean => status === 1 || status === 5 || status === 7;

/** Why a queued run waits, in words (the contract's `conditions[].reason`). */
const REASONS: Record<string, string> = {
  QueueConcurrencyLimitReached: 'Its queue has no free slot: as many runs as the queue allows are running.',
  DispatchAdmissionPending: 'A worker has been reserved for it; the hand-over is under way.',
  WorkerSelectorNotMatched: 'No healthy worker has the labels its worker_selector asks for.',
  NoAvailableWorker: 'No healthy worker is connected.',
  DispatchUnavailable: 'Dispatch is unavailable for the moment.',
};

export const conditionInWords = (reason: string): string => REASONS[reason] ?? reason;
