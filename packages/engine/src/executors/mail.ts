import { access } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { z } from 'zod';
import { toError } from '@trellis/core';
import { failWith, issuesOf } from './service-config.js';
import { describeServer, sendMail, smtpSettings, type OutgoingMail } from './smtp-transport.js';
import type { StepExecutionContext, StepExecutor } from './types.js';

const addresses = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((v) => (Array.isArray(v) ? v : [v]));

const mailStepSchema = z.object({
  to: addresses,
  from: z.string().min(1),
  subject: z.string().default(''),
  message: z.string().default(''),
  contentType: z.enum(['text/plain', 'text/html']).default('text/plain'),
  attachments: z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : [v])).default([]),
});

/** Attachments are files on this host, relative to the step's working directory; a missing one fails the step before anything is sent. */
async function attachmentsOf(paths: string[], workingDir: string): Promise<OutgoingMail['attachments'] | string> {
  const out: OutgoingMail['attachments'] = [];
  for (const path of paths) {
    const full = resolve(workingDir, path);
    try {
      await access(full);
    } catch {
      return `attachment "${path}" not found`;
    }
    out.push({ filename: basename(full), path: full });
  }
  return out;
}

async function mailOf(ctx: StepExecutionContext): Promise<OutgoingMail | string> {
  const parsed = mailStepSchema.safeParse(ctx.step.config);
  if (!parsed.success) return `invalid mail config: ${issuesOf(parsed.error)}`;
  const config = parsed.data;
  const attachments = await attachmentsOf(config.attachments, ctx.workingDir);
  if (typeof attachments === 'string') return attachments;
  return { from: config.from, to: config.to, subject: config.subject, body: config.message, html: config.contentType === 'text/html', attachments };
}

/**
 * `type: mail`: config to, from, subject, message, contentType (text/plain or text/html) and
 * attachments, sent through the DAG-level `smtp` server. The server's message id is the
 * step's output.
 */
export const mailExecutor: StepExecutor = {
  type: 'mail',
  async run(ctx) {
    const smtp = smtpSettings(ctx.dagDefaults);
    if (typeof smtp === 'string') return failWith(ctx.stderr, 'mail', smtp);
    const mail = await mailOf(ctx);
    if (typeof mail === 'string') return failWith(ctx.stderr, 'mail', mail);
    ctx.stderr.write(`mail: sending "${mail.subject}" to ${mail.to.join(', ')} through ${describeServer(smtp)}\n`);
    try {
      const messageId = await sendMail(smtp, mail, ctx.signal);
      ctx.stdout.write(`${messageId}\n`);
      return { exitCode: 0 };
    } catch (caught) {
      if (ctx.signal.aborted) return { exitCode: 1, stopped: true, error: 'mail stopped' };
      return failWith(ctx.stderr, 'mail', `not sent: ${toError(caught).message}`);
    }
  },
};
