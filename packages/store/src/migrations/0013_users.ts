/**
 * Built-in users, the secrets every coordinator shares (the login token signing key), and the
 * failed-login counters that throttle password guessing across restarts and coordinators.
 * `token_generation` is part of every login token: a password change, a reset or disabling the
 * user bumps it, so tokens issued before stop working.
 */
export const sql = `
CREATE TABLE users (
  id text PRIMARY KEY,
  username text NOT NULL UNIQUE,
  password_hash text NOT NULL,
  role text NOT NULL CHECK (role IN ('admin', 'manager', 'developer', 'operator', 'viewer')),
  auth_provider text NOT NULL DEFAULT 'builtin' CHECK (auth_provider IN ('builtin', 'oidc')),
  is_disabled boolean NOT NULL DEFAULT false,
  token_generation integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE auth_secrets (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE login_failures (
  scope text NOT NULL CHECK (scope IN ('username', 'address')),
  subject text NOT NULL,
  failures integer NOT NULL,
  window_started_at timestamptz NOT NULL,
  blocked_until timestamptz,
  PRIMARY KEY (scope, subject)
);
`;
