/**
 * The git commit a definition's exact text came from, when repository sync brought or published
 * it: keyed by the same content hash as `dag_specs` (SHA-256 of the YAML), so a run's
 * `spec_hash` names the commit of the definition it ran without a column on `runs`. The first
 * commit that had the text is kept: the same text in a later commit is the same definition.
 */
export const sql = `
CREATE TABLE synced_specs (
  spec_hash text PRIMARY KEY,
  git_commit text NOT NULL,
  synced_at timestamptz NOT NULL DEFAULT now()
);
`;
