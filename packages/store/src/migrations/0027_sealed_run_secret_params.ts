/**
 * The clear inputs of a run that carry secrets (run_secret_params) sealed at rest, like profile
 * secrets: AES-256-GCM under the secrets key, the key id beside them, so key rotation re-seals
 * them too. A row is either sealed (the four sealed_* columns; params and mask_values NULL) or,
 * on a coordinator without a secrets key, clear as before.
 */
export const sql = `
ALTER TABLE run_secret_params ALTER COLUMN params DROP NOT NULL;
ALTER TABLE run_secret_params ALTER COLUMN mask_values DROP NOT NULL;
ALTER TABLE run_secret_params ADD COLUMN sealed_key_id text;
ALTER TABLE run_secret_params ADD COLUMN sealed_nonce bytea;
ALTER TABLE run_secret_params ADD COLUMN sealed_ciphertext bytea;
ALTER TABLE run_secret_params ADD COLUMN sealed_auth_tag bytea;
ALTER TABLE run_secret_params ADD CONSTRAINT run_secret_params_one_form CHECK ((sealed_key_id IS NULL) = (params IS NOT NULL));
CREATE INDEX run_secret_params_sealed_key ON run_secret_params (sealed_key_id) WHERE sealed_key_id IS NOT NULL;
`;
