/**
 * The runtime-profile entries a run's latest attempt resolved: `[{key, kind, layer}]`, metadata
 * only (the values are resolved per attempt and never stored with the run).
 */
export const sql = `
ALTER TABLE runs ADD COLUMN profile_entries jsonb NOT NULL DEFAULT '[]'::jsonb;
`;
