/**
 * Who started each run (`triggeredBy`: a user, API key, webhook, the scheduler, or anonymous
 * while auth is off), as `{kind, id, name}`; never a credential. Runs from before this
 * migration were started without auth: anonymous, or the scheduler for scheduled run trees.
 * The default only fills those rows: every new run names its starter.
 */
export const sql = `
ALTER TABLE runs ADD COLUMN triggered_by jsonb NOT NULL DEFAULT '{"kind": "anonymous", "id": "anonymous", "name": "anonymous"}';
UPDATE runs r SET triggered_by = '{"kind": "scheduler", "id": "scheduler", "name": "scheduler"}'
  WHERE r.trigger = 'schedule'
     OR EXISTS (SELECT 1 FROM runs root WHERE root.dag_name = r.root_dag_run_name AND root.dag_run_id = r.root_dag_run_id AND root.trigger = 'schedule');
ALTER TABLE runs ALTER COLUMN triggered_by DROP DEFAULT;
`;
