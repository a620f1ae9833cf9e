/**
 * API keys: only a SHA-256 of each secret is kept (a key is 32 random bytes, so a fast hash is
 * enough and keeps checking a key cheap), with its leading characters for display.
 * `last_used_at` is written in batches, never once per request.
 */
export const sql = `
CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  name text NOT NULL UNIQUE,
  description text NOT NULL DEFAULT '',
  role text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  key_prefix text NOT NULL,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);
`;
