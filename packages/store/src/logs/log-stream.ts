/* What the run log modules share: a stream's address and totals, its piece size, its channel. */

/**
 * The channel that tells followers on every coordinator a run's logs grew; the payload is the
 * run's id, and readers fetch from their last offset.
 */
export const RUN_LOG_CHANNEL = 'trellis_run_logs';

/**
 * Largest piece stored in one row. A page starts reading at the piece holding its first line
 * (the line index says which), so this bounds what a page scans to find its start: at 64 KiB,
 * one read window of the pager.
 */
export const MAX_LOG_PIECE = 64 * 1024;

/** One log of one attempt as stored: its size, its newlines, and whether its last byte is one. */
export interface LogStreamInfo {
  size: number;
  newlines: number;
  endsWithNewline: boolean;
}

export interface LogStreamRef {
  runId: number;
  attemptId: string;
  stream: string;
}
