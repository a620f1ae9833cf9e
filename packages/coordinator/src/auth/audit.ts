import { recordEvent, type Db } from '@trellis/store';
import type { Principal } from './principal.js';

export interface AuditEntry {
  /** `api_key.created`, `webhook.triggered`, ... */
  type: string;
  message: string;
  dagName?: string;
  dagRunId?: string;
  /** What changed: ids, names, roles; never a secret. */
  data?: Record<string, unknown>;
}

/** One `kind=audit` event naming who did it (its id in `userId`, kind and name in `data.actor`). */
export async function recordAudit(db: Db, actor: Principal, entry: AuditEntry): Promise<void> {
  await recordEvent(db, {
    kind: 'audit',
    type: entry.type,
    userId: actor.id,
    message: `${actor.name}: ${entry.message}`,
    ...(entry.dagName !== undefined ? { dagName: entry.dagName } : {}),
    ...(entry.dagRunId !== undefined ? { dagRunId: entry.dagRunId } : {}),
    data: { actor: { kind: actor.kind, id: actor.id, name: actor.name }, ...entry.data },
  });
}
