import { recordEvent, type NewEvent, type Queryable } from '@trellis/store';
import type { Actor } from './principal.js';

export interface AuditEntry {
  /** `auth.login.failed`, `api_key.created`, `webhook.triggered`, ... */
  type: string;
  message: string;
  dagName?: string;
  dagRunId?: string;
  /** What changed: ids, names, roles; never a password, a token or a key. */
  data?: Record<string, unknown>;
}

/**
 * One `kind=audit` event naming who did it: the actor's id in `userId` (a user, API key or
 * webhook id, or `scheduler`), its kind and name in `data.actor`. An unknown actor (a failed login) has none.
 */
export async function recordAudit(db: Queryable, actor: Actor | undefined, entry: AuditEntry): Promise<void> {
  await recordEvent(db, auditEvent(actor, entry));
}

/** The event recordAudit writes, for a statement that records it with the change itself (a new run). */
export function auditEvent(actor: Actor | undefined, entry: AuditEntry): NewEvent {
  return {
    kind: 'audit',
    type: entry.type,
    ...(actor !== undefined ? { userId: actor.id } : {}),
    message: actor !== undefined ? `${actor.name}: ${entry.message}` : entry.message,
    ...(entry.dagName !== undefined ? { dagName: entry.dagName } : {}),
    ...(entry.dagRunId !== undefined ? { dagRunId: entry.dagRunId } : {}),
    data: { ...entry.data, ...(actor !== undefined ? { actor: { kind: actor.kind, id: actor.id, name: actor.name } } : {}) },
  };
}

/** The audit trail bound to its database, for services that record many kinds of change. */
export class AuditTrail {
  constructor(private readonly db: Queryable) {}

  record(type: string, actor: Actor | undefined, message: string, data: Record<string, unknown> = {}): Promise<void> {
    return recordAudit(this.db, actor, { type, message, data });
  }
}
