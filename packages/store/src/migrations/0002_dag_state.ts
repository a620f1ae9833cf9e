/** Per-DAG state that is not in the definition file: suspension (the scheduler skips suspended DAGs). */
export const sql = `
CREATE TABLE dag_state (
  dag_name text PRIMARY KEY,
  suspended boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now()
);
`;
