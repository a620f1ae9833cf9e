import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { nodeStatusLabel, runStatusLabel, toError, type Dag, type MailConfig, type RunStatus } from '@trellis/core';
import type { OutgoingMail } from '../executors/smtp-transport.js';
import type { NodeState } from './node-state.js';

/** What a notice says about the run. */
export interface RunSummary {
  dagRunId: string;
  status: RunStatus;
  startedAt: string;
  finishedAt: string;
  error: string;
  nodes: readonly NodeState[];
  runLogPath: string;
}

export interface MailNoticeHost {
  dag: Dag;
  /** The DAG-level `smtp`, with `${...}` expanded. */
  smtp(): Record<string, unknown> | undefined;
  mask(text: string): string;
  log(message: string): void;
}

/** Log files worth attaching: those that exist and hold something. */
function logFiles(paths: string[]): OutgoingMail['attachments'] {
  const unique = [...new Set(paths)];
  return unique.filter((path) => {
    try {
      return statSync(path).size > 0;
    } catch {
      return false;
    }
  }).map((path) => ({ filename: basename(path), path }));
}

/**
 * The notices `mail_on`, `mail_on_error`, `error_mail`, `info_mail` and `wait_mail` ask for.
 * A notice is about the run, not part of it: one that cannot be sent is logged on the run and
 * changes nothing else. The mail library is loaded with the first notice sent.
 */
export class MailNotices {
  constructor(private readonly host: MailNoticeHost) {}

  async runEnded(run: RunSummary): Promise<void> {
    const { dag } = this.host;
    const label = runStatusLabel(run.status);
    const succeeded = label === 'succeeded' || label === 'partially_succeeded';
    if (succeeded && dag.mailOn.success) await this.send(dag.infoMail, 'mail_on.success', 'the successful run', label, this.runBody(run), this.runLogs(run));
    if (label === 'failed' && dag.mailOn.failure) await this.send(dag.errorMail, 'mail_on.failure', 'the failed run', 'failed', this.runBody(run), this.runLogs(run));
  }

  async stepFailed(node: NodeState, run: Pick<RunSummary, 'dagRunId'>): Promise<void> {
    const name = node.step.name;
    const body = [`DAG: ${this.host.dag.name}`, `Run: ${run.dagRunId}`, `Step: ${name}`, `Status: ${nodeStatusLabel(node.status)}`, `Error: ${node.error}`].join('\n');
    await this.send(this.host.dag.errorMail, `mail_on_error of step "${name}"`, `the failure of step "${name}"`, `step "${name}" failed`, body, logFiles([node.stdoutPath, node.stderrPath]));
  }

  async waiting(run: RunSummary, waitingSteps: string[]): Promise<void> {
    const body = `${this.runBody(run)}\n\nWaiting for approval: ${waitingSteps.join(', ')}`;
    await this.send(this.host.dag.waitMail, 'mail_on.wait', 'the wait for approval', 'waiting for approval', body, logFiles([run.runLogPath]));
  }

  private runBody(run: RunSummary): string {
    const lines = [`DAG: ${this.host.dag.name}`, `Run: ${run.dagRunId}`, `Status: ${runStatusLabel(run.status)}`, `Started: ${run.startedAt}`];
    if (run.finishedAt !== '') lines.push(`Finished: ${run.finishedAt}`);
    if (run.error !== '') lines.push(`Error: ${run.error}`);
    lines.push('', 'Steps:', ...run.nodes.map((n) => `  ${n.step.name}: ${nodeStatusLabel(n.status)}${n.error !== '' ? ` (${n.error})` : ''}`));
    return lines.join('\n');
  }

  private runLogs(run: RunSummary): OutgoingMail['attachments'] {
    return logFiles([run.runLogPath, ...run.nodes.flatMap((n) => [n.stdoutPath, n.stderrPath])]);
  }

  private async send(config: MailConfig | undefined, setting: string, occasion: string, what: string, body: string, logs: OutgoingMail['attachments']): Promise<void> {
    // Validation refuses a setting without its mail config; a caller's own model may still lack one.
    if (config === undefined) return this.host.log(`no mail was sent for ${occasion} (${setting}): no mail configuration`);
    const subject = `${config.prefix !== undefined && config.prefix !== '' ? `${config.prefix} ` : ''}${this.host.dag.name}: ${what}`;
    const mail: OutgoingMail = { from: config.from, to: config.to, subject: this.host.mask(subject), body: this.host.mask(body), html: false, attachments: config.attachLogs ? logs : [] };
    try {
      const { sendMail, smtpSettings } = await import('../executors/smtp-transport.js');
      const smtp = smtpSettings(this.host.smtp());
      if (typeof smtp === 'string') throw new Error(smtp);
      await sendMail(smtp, mail);
      this.host.log(`mail sent for ${occasion} (${setting}) to ${config.to.join(', ')}`);
    } catch (caught) {
      this.host.log(`mail for ${occasion} (${setting}) could not be sent: ${toError(caught).message}`);
    }
  }
}
