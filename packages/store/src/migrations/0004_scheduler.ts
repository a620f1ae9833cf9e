/**
 * The scheduler: one leader among the coordinators (a lease row whose token fences every tick),
 * the last minute it ticked, the pause switch, and the one-off entries already fired.
 */
export const sql = `
CREATE TABLE scheduler_lease (
  id integer PRIMARY KEY CHECK (id = 1),
  holder text NOT NULL,
  token bigint NOT NULL,
  expires_at timestamptz NOT NULL
);

CREATE TABLE scheduler_state (
  id integer PRIMARY KEY CHECK (id = 1),
  last_tick timestamptz,
  paused boolean NOT NULL DEFAULT false,
  paused_at timestamptz,
  paused_by text NOT NULL DEFAULT '',
  pause_reason text NOT NULL DEFAULT ''
);
INSERT INTO scheduler_state (id) VALUES (1);

CREATE TABLE schedule_oneoffs (
  dag_name text NOT NULL,
  at text NOT NULL,
  dag_run_id text NOT NULL,
  consumed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (dag_name, at)
);
`;
