/**
 * One webhook per DAG (by file name). The token is kept as a SHA-256 only. The signing secret
 * of senders that sign their requests (HMAC) must be readable to verify a signature, so it is
 * kept as given; it is never returned after creation.
 */
export const sql = `
CREATE TABLE webhooks (
  id uuid PRIMARY KEY,
  dag_name text NOT NULL UNIQUE,
  token_hash text NOT NULL UNIQUE,
  token_prefix text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  signing_secret text,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);
`;
