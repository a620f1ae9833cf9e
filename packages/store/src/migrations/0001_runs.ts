/** Runs, their nodes and outputs, and the exact definitions they ran (stored once per hash). */
export const sql = `
CREATE TABLE dag_specs (
  hash text PRIMARY KEY,
  yaml text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE runs (
  id bigserial PRIMARY KEY,
  dag_name text NOT NULL,
  dag_run_id text NOT NULL,
  file_name text NOT NULL DEFAULT '',
  root_dag_run_name text NOT NULL,
  root_dag_run_id text NOT NULL,
  parent_dag_run_name text NOT NULL DEFAULT '',
  parent_dag_run_id text NOT NULL DEFAULT '',
  attempt_id text NOT NULL,
  attempt_number integer NOT NULL DEFAULT 1,
  status smallint NOT NULL,
  queued_at timestamptz,
  started_at timestamptz,
  finished_at timestamptz,
  params text NOT NULL DEFAULT '[]',
  queue_name text NOT NULL,
  worker_id text NOT NULL DEFAULT '',
  profile_name text NOT NULL DEFAULT '',
  log_file text NOT NULL DEFAULT '',
  error text NOT NULL DEFAULT '',
  spec_hash text NOT NULL REFERENCES dag_specs (hash),
  labels text[] NOT NULL DEFAULT '{}',
  trigger text NOT NULL DEFAULT 'manual',
  no_reuse boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (dag_name, dag_run_id)
);
CREATE INDEX runs_newest ON runs (created_at DESC, id DESC);
CREATE INDEX runs_by_dag ON runs (dag_name, created_at DESC, id DESC);
CREATE INDEX runs_by_status ON runs (status, created_at DESC, id DESC);
CREATE INDEX runs_queued ON runs (queue_name, created_at, id) WHERE status = 5;

CREATE TABLE run_nodes (
  run_id bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  kind text NOT NULL,
  position integer NOT NULL,
  step_name text NOT NULL,
  data jsonb NOT NULL,
  PRIMARY KEY (run_id, kind, position)
);

CREATE TABLE run_outputs (
  run_id bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  metadata jsonb NOT NULL,
  outputs jsonb NOT NULL
);
`;
