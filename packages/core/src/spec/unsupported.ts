import type { Dag, Step, StepType } from '../model/dag.js';
import type { Issues } from './issues.js';

/**
 * Settings the spec accepts that this build cannot carry out. Mail settings only lose a
 * notification: they stay valid and are warned about, and the run log says when a mail was not
 * sent (see the engine's runner).
 */

export const MAIL_UNAVAILABLE = 'mail delivery is not available in this build';

/** Step types this build has no executor for: a DAG using one fails validation, so no step of it fails later or runs elsewhere. */
export const UNAVAILABLE_STEP_TYPES: ReadonlySet<StepType> = new Set<StepType>(['mail', 's3', 'redis', 'chat', 'agent', 'gha']);

export function unavailableTypeMessage(type: StepType): string {
  return `step type "${type}" is not available in this build; the DAG cannot run until it is`;
}

/** A step (or handler) of a type without an executor, named by its `type` path. */
export function refuseUnavailableType(step: Step, path: string, issues: Issues): void {
  if (UNAVAILABLE_STEP_TYPES.has(step.type)) issues.add(`${path}.type`, unavailableTypeMessage(step.type));
}

/** The settings that ask for mail, as written; `mail_on_error` only where the step or `defaults` set it. */
export interface MailRequests {
  dag: Dag;
  /** `defaults.mail_on_error: true`. */
  defaultsMailOnError: boolean;
  /** Paths of steps and handlers whose own spec sets `mail_on_error: true`. */
  stepPaths: string[];
}

export function warnUnsentMail(requests: MailRequests, issues: Issues): void {
  const { dag } = requests;
  const warn = (path: string): void => issues.warn(path, `no mail will be sent: ${MAIL_UNAVAILABLE}`);
  for (const kind of ['success', 'failure', 'wait'] as const) if (dag.mailOn[kind]) warn(`mail_on.${kind}`);
  if (dag.errorMail !== undefined) warn('error_mail');
  if (dag.infoMail !== undefined) warn('info_mail');
  if (dag.waitMail !== undefined) warn('wait_mail');
  if (dag.smtp !== undefined) warn('smtp');
  if (requests.defaultsMailOnError) warn('defaults.mail_on_error');
  for (const path of requests.stepPaths) warn(`${path}.mail_on_error`);
}
