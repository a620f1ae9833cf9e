import { recordEvent, type Queryable } from '@trellis/store';
import type { Principal } from './principal.js';

/**
 * The audit trail: `kind=audit` events naming who did what, by id. Never a password, a token or
 * a key: callers pass names and ids only.
 */
export class AuditTrail {
  constructor(private readonly db: Queryable) {}

  record(type: string, actor: Principal | undefined, message: string, data: Record<string, unknown> = {}): Promise<void> {
    return recordEvent(this.db, {
      kind: 'audit',
      type,
      ...(actor !== undefined ? { userId: actor.id } : {}),
      message,
      data: { ...data, ...(actor !== undefined ? { actorKind: actor.kind, actorName: actor.name } : {}) },
    });
  }
}
