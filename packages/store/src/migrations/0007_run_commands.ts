/** Decisions for runs on remote workers (approve, reject a waiting step), delivered with the next heartbeat. */
export const sql = `
CREATE TABLE run_commands (
  id bigserial PRIMARY KEY,
  run_id bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  attempt_id text NOT NULL,
  kind text NOT NULL,
  step_name text NOT NULL,
  inputs jsonb NOT NULL DEFAULT '{}',
  reason text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX run_commands_by_run ON run_commands (run_id);
`;
