import { roleGrants, type Permission } from './permissions.js';
import type { Principal } from './principal.js';
import { ForbiddenError, UnauthorizedError } from '@trellis/core';

/** The contract's wording where it has one. */
const DENIED: Record<Permission, string> = {
  public: '',
  authenticated: '',
  webhook: '',
  'dags:read': 'Permission denied to read DAGs',
  'dags:write': 'Permission denied to edit DAGs',
  'dags:run': 'Permission denied to run DAGs',
  'audit:read': 'Permission denied to read event logs: manager or admin role required',
  'users:manage': 'Permission denied: admin role required',
  'profiles:manage': 'Permission denied to manage runtime profiles: manager or admin role required',
  'secrets:manage': 'Permission denied: admin role required',
};

/**
 * The one authorisation step: whether `principal` (undefined: no credentials) may call a route
 * that needs `permission`. 401 without credentials, 403 for a role without the permission.
 */
export function authorize(principal: Principal | undefined, permission: Permission): void {
  // The webhook route authenticates its own token (see admit).
  if (permission === 'public' || permission === 'webhook') return;
  if (principal === undefined) throw new UnauthorizedError('authentication required: send Authorization: Bearer <token> or Basic credentials');
  // Webhook tokens start runs of their DAG and nothing else.
  if (principal.kind === 'webhook') throw new UnauthorizedError('a webhook token is accepted only by POST /webhooks/{fileName}');
  if (!roleGrants(principal.role, permission)) throw new ForbiddenError(DENIED[permission], { permission, role: principal.role });
}
