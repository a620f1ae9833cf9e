/**
 * Workspaces, runtime profiles and the secret store.
 * - `profiles` holds every layer: the one Global defaults layer (`scope = 'global'`), one defaults
 *   layer per workspace (`scope = 'workspace'`, removed with its workspace, following a rename),
 *   and the named profiles (`scope = 'profile'`).
 * - `profile_entries`: a variable keeps its value here; a secret points at its `profile_secrets` row.
 * - `profile_secrets`: AES-256-GCM ciphertext, nonce and tag, and the id of the key-encryption key
 *   that sealed it, so coordinators can hold several keys while a rotation re-encrypts the rows.
 *   The plaintext is nowhere in the database.
 */
export const sql = `
CREATE TABLE workspaces (
  id uuid PRIMARY KEY,
  name text NOT NULL UNIQUE,
  description text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE profiles (
  id uuid PRIMARY KEY,
  scope text NOT NULL CHECK (scope IN ('global', 'workspace', 'profile')),
  name text,
  workspace_id uuid REFERENCES workspaces (id) ON DELETE CASCADE,
  description text NOT NULL DEFAULT '',
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  protected boolean NOT NULL DEFAULT false,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((scope = 'profile') = (name IS NOT NULL)),
  CHECK ((scope = 'workspace') = (workspace_id IS NOT NULL))
);
CREATE UNIQUE INDEX profiles_name ON profiles (name) WHERE scope = 'profile';
CREATE UNIQUE INDEX profiles_workspace ON profiles (workspace_id) WHERE scope = 'workspace';
CREATE UNIQUE INDEX profiles_global ON profiles (scope) WHERE scope = 'global';
CREATE TABLE profile_secrets (
  id uuid PRIMARY KEY,
  profile_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
  key_id text NOT NULL,
  nonce bytea NOT NULL,
  ciphertext bytea NOT NULL,
  auth_tag bytea NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX profile_secrets_key_id ON profile_secrets (key_id);
CREATE TABLE profile_entries (
  profile_id uuid NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
  key text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('variable', 'secret')),
  value text,
  secret_id uuid REFERENCES profile_secrets (id),
  updated_by text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (profile_id, key),
  CHECK ((kind = 'variable') = (value IS NOT NULL)),
  CHECK ((kind = 'secret') = (secret_id IS NOT NULL))
);
`;
