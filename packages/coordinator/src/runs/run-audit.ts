import type { NewEvent, Queryable, RunRecord } from '@trellis/store';
import { auditEvent, recordAudit } from '../auth/audit.js';
import type { Actor } from '../auth/principal.js';

/** What someone did to a run, as its audit event's type. */
export type RunAction =
  | 'run.started'
  | 'run.enqueued'
  | 'run.stopped'
  | 'run.retried'
  | 'run.rescheduled'
  | 'run.dequeued'
  | 'run.step.approved'
  | 'run.step.rejected'
  | 'run.step.status_set';

const VERBS: Record<RunAction, string> = {
  'run.started': 'started',
  'run.enqueued': 'queued',
  'run.stopped': 'stopped',
  'run.retried': 'retried',
  'run.rescheduled': 'rescheduled',
  'run.dequeued': 'dequeued',
  'run.step.approved': 'approved a step of',
  'run.step.rejected': 'rejected a step of',
  'run.step.status_set': 'set a step status of',
};

/**
 * The audit event of an action on a run, naming its actor; `q` is the caller's transaction when
 * the action has one (the scheduler's tick). `data` holds names and ids, never a secret.
 */
export function auditRun(q: Queryable, actor: Actor, action: RunAction, run: Pick<RunRecord, 'dagName' | 'dagRunId'>, data: Record<string, unknown> = {}): Promise<void> {
  return recordAudit(q, actor, runAuditEntry(action, run, data));
}

/** The audit event of an action that creates its run: written by the run's insert (see StartRequest.audit). */
export function runAuditEvent(actor: Actor, action: RunAction, run: Pick<RunRecord, 'dagName' | 'dagRunId'>, data: Record<string, unknown> = {}): NewEvent {
  return auditEvent(actor, runAuditEntry(action, run, data));
}

function runAuditEntry(action: RunAction, run: Pick<RunRecord, 'dagName' | 'dagRunId'>, data: Record<string, unknown>) {
  return { type: action, message: `${VERBS[action]} run ${run.dagRunId} of ${run.dagName}`, dagName: run.dagName, dagRunId: run.dagRunId, data };
}
