/**
 * Repository sync state, shared by every coordinator (the git working clone on a coordinator's
 * disk is only a cache). `sync_config` has one row: the settings as JSON, the access token
 * sealed like a runtime-profile secret (AES-256-GCM, key id beside it), and the last pull.
 * `sync_items` holds, per DAG or document, the content hash and commit it last agreed with the
 * repository on, and the hash the repository held at the last fetch (`remote_hash`, NULL when the
 * repository no longer has it), so every coordinator derives the same item status without a
 * fetch; `synced_hash` NULL means both sides had the item without ever agreeing on it.
 */
export const sql = `
CREATE TABLE sync_config (
  id integer PRIMARY KEY CHECK (id = 1),
  settings jsonb NOT NULL,
  token_key_id text,
  token_nonce bytea,
  token_ciphertext bytea,
  token_auth_tag bytea,
  last_sync_at timestamptz,
  last_sync_commit text,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE sync_items (
  kind text NOT NULL CHECK (kind IN ('dag', 'doc')),
  name text NOT NULL,
  synced_hash text,
  remote_hash text,
  synced_commit text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (kind, name)
);
`;
