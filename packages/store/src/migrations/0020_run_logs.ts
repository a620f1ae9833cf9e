/**
 * Run logs in the database, so every coordinator reads, pages and follows any run's logs and
 * none is lost with a coordinator's disk. A stream is one log of one attempt: `run.log`, or a
 * step's stdout/stderr, named by its path relative to the attempt's log folder.
 *
 * run_log_streams: one row a stream, updated with every append in the same transaction: its
 * size in bytes, its newlines, and whether it ends with one, so totalLines is one row read.
 * run_log_chunks: the bytes, in pieces of at most 64 KiB keyed by their byte offset, each with
 * the newlines before it and in it (the line index): a page fetches only the pieces it shows.
 * Both go with their run (ON DELETE CASCADE): retention and run deletion remove them.
 */
export const sql = `
CREATE TABLE run_log_streams (
  run_id bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  attempt_id text NOT NULL,
  stream text NOT NULL,
  size bigint NOT NULL DEFAULT 0,
  newlines bigint NOT NULL DEFAULT 0,
  ends_with_newline boolean NOT NULL DEFAULT false,
  PRIMARY KEY (run_id, attempt_id, stream)
);
CREATE TABLE run_log_chunks (
  run_id bigint NOT NULL,
  attempt_id text NOT NULL,
  stream text NOT NULL,
  byte_offset bigint NOT NULL,
  lines_before bigint NOT NULL,
  newlines integer NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (run_id, attempt_id, stream, byte_offset),
  FOREIGN KEY (run_id, attempt_id, stream) REFERENCES run_log_streams(run_id, attempt_id, stream) ON DELETE CASCADE
);
CREATE INDEX run_log_chunks_lines ON run_log_chunks (run_id, attempt_id, stream, lines_before, byte_offset);
`;
