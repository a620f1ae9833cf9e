import type { Dag } from '../model/dag.js';
import type { Issues } from './issues.js';

/** The settings that ask for mail, as written; `mail_on_error` only where the step or `defaults` set it. */
export interface MailRequests {
  dag: Dag;
  /** `defaults.mail_on_error: true`. */
  defaultsMailOnError: boolean;
  /** Paths of steps and handlers whose own spec sets `mail_on_error: true`. */
  stepPaths: string[];
}

const SMTP_NEEDED = 'needs the DAG-level smtp server (smtp: {host: ...}) to send its mail';

/**
 * A setting that asks for mail must say who gets it and through which server: otherwise no
 * mail could ever go out, and that is a definition error rather than a surprise at run time.
 */
export function checkMailSettings(requests: MailRequests, issues: Issues): void {
  const { dag } = requests;
  const need = (path: string, present: boolean, config: string): void => {
    if (!present) issues.add(path, `needs ${config} (from, to) to send its mail`);
    if (dag.smtp === undefined) issues.add(path, SMTP_NEEDED);
  };
  if (dag.mailOn.success) need('mail_on.success', dag.infoMail !== undefined, 'info_mail');
  if (dag.mailOn.failure) need('mail_on.failure', dag.errorMail !== undefined, 'error_mail');
  if (dag.mailOn.wait) need('mail_on.wait', dag.waitMail !== undefined, 'wait_mail');
  if (requests.defaultsMailOnError) need('defaults.mail_on_error', dag.errorMail !== undefined, 'error_mail');
  for (const path of requests.stepPaths) need(`${path}.mail_on_error`, dag.errorMail !== undefined, 'error_mail');
}
