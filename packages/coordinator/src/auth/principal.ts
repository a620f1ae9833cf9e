/** The contract's roles, strongest first. */
export const ROLES = ['admin', 'manager', 'developer', 'operator', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/**
 * Who made a request, once its credentials were checked. Every audit record and every run's
 * `triggeredBy` names one of these, never the credential itself.
 */
export interface Principal {
  kind: 'user' | 'apiKey' | 'webhook' | 'anonymous';
  /** User id, API key id or webhook id; `anonymous` when auth is off. */
  id: string;
  /** Username, API key name, or the webhook's DAG name. */
  name: string;
  role: Role;
}

/** The principal of every request while auth is off (mode `none`). */
export const ANONYMOUS: Principal = { kind: 'anonymous', id: 'anonymous', name: 'anonymous', role: 'admin' };
