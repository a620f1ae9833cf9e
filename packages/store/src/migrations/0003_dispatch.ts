/**
 * Distributed dispatch: where a run may execute (the local executor or a remote worker whose
 * labels contain the run's selector), the hand-out lease (dispatched, acknowledged), stop
 * requests that heartbeats carry to workers, the last report sequence applied per attempt,
 * and the workers themselves with their last heartbeat.
 */
export const sql = `
ALTER TABLE runs ADD COLUMN dispatch_target text NOT NULL DEFAULT 'local';
ALTER TABLE runs ADD COLUMN worker_selector jsonb NOT NULL DEFAULT '{}';
ALTER TABLE runs ADD COLUMN dispatched_at timestamptz;
ALTER TABLE runs ADD COLUMN acked_at timestamptz;
ALTER TABLE runs ADD COLUMN stop_requested_at timestamptz;
ALTER TABLE runs ADD COLUMN report_seq bigint NOT NULL DEFAULT 0;
CREATE INDEX runs_active_by_worker ON runs (worker_id) WHERE status IN (1, 7);
CREATE INDEX runs_active_by_queue ON runs (queue_name) WHERE status IN (1, 7);

CREATE TABLE workers (
  id text PRIMARY KEY,
  labels jsonb NOT NULL DEFAULT '{}',
  pollers integer NOT NULL DEFAULT 1,
  pollers_busy integer NOT NULL DEFAULT 0,
  hostname text NOT NULL DEFAULT '',
  version text NOT NULL DEFAULT '',
  running jsonb NOT NULL DEFAULT '[]',
  registered_at timestamptz NOT NULL DEFAULT now(),
  last_heartbeat timestamptz NOT NULL DEFAULT now()
);
`;
