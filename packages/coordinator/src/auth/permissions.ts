import type { Role } from './principal.js';

/**
 * What a route needs, one entry per route (the `permission` of its declaration). The role
 * columns follow the contract's table: DAGs read / write / run-stop, audit (event) logs, user
 * management.
 * - `public`: no credentials (health, setup, login, workspace reads).
 * - `authenticated`: any signed-in principal (change-password, `/auth/me`).
 * - `webhook`: only a webhook token of the addressed DAG (`POST /webhooks/{fileName}`).
 * - `profiles:manage`: runtime profiles and their defaults layers (admin, manager); which
 *   protected profile a caller may touch is the profile service's rule (admins only).
 * - `secrets:manage`: the secret store itself (key rotation): admin.
 */
export type Permission = 'public' | 'authenticated' | 'webhook' | 'dags:read' | 'dags:write' | 'dags:run' | 'audit:read' | 'users:manage' | 'profiles:manage' | 'secrets:manage';

const GRANTS: Record<Role, ReadonlySet<Permission>> = {
  admin: new Set(['dags:read', 'dags:write', 'dags:run', 'audit:read', 'users:manage', 'profiles:manage', 'secrets:manage']),
  manager: new Set(['dags:read', 'dags:write', 'dags:run', 'audit:read', 'profiles:manage']),
  developer: new Set(['dags:read', 'dags:write', 'dags:run']),
  operator: new Set(['dags:read', 'dags:run']),
  viewer: new Set(['dags:read']),
};

/** Whether a role may do what a route needs (`public`, `authenticated` and `webhook` are decided by the caller's kind, not its role). */
export function roleGrants(role: Role, permission: Permission): boolean {
  if (permission === 'public' || permission === 'authenticated') return true;
  if (permission === 'webhook') return false;
  return GRANTS[role].has(permission);
}
