/**
 * The run-level variables (ITEM of a `parallel` item) of a sub-run whose values carry its
 * parent's secrets, in clear, beside its clear params. `runs.run_env` then holds them masked.
 * NULL: `runs.run_env` shows no secret and is what the run executes with.
 */
export const sql = `
ALTER TABLE run_secret_params ADD COLUMN run_env jsonb;
`;
