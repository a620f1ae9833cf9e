/**
 * The params of a sub-run that carry its parent's secrets, in clear, beside the secret values
 * themselves. `runs.params` shows them masked; whoever executes the child (a worker, the local
 * executor, a retry) reads them from here, and the child masks the values in what it reports.
 * Kept out of `runs` so that no list, detail or export of runs can show them.
 */
export const sql = `
CREATE TABLE run_secret_params (
  run_id bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  params text NOT NULL,
  mask_values jsonb NOT NULL
);
`;
