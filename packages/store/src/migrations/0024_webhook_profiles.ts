/** The runtime profiles a webhook's callers may select with `X-Svc-Profile` (protected ones too, by contract rule 8). */
export const sql = `
ALTER TABLE webhooks ADD COLUMN profile_allowlist jsonb NOT NULL DEFAULT '[]'::jsonb;
`;
