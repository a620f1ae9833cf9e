/**
 * Run-level variables a run was started with, such as ITEM of a `parallel` item that the parent
 * handed its sub-run. Recorded so that whoever runs the child (the local executor, a worker, a
 * retry) gives it the same environment. Never secrets: those are resolved when a run starts.
 */
export const sql = `
ALTER TABLE runs ADD COLUMN run_env jsonb NOT NULL DEFAULT '{}';
`;
