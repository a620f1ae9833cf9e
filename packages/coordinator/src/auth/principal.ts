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

/**
 * Who did something that the audit trail and a run's `triggeredBy` record: a caller's
 * principal, or the scheduler itself. Only these three fields are ever recorded.
 */
export interface Actor {
  kind: Principal['kind'] | 'scheduler';
  id: string;
  name: string;
}

/** The actor of scheduled runs, and of the stops and restarts a schedule makes. */
export const SCHEDULER: Actor = { kind: 'scheduler', id: 'scheduler', name: 'scheduler' };
