import { connect, type Socket } from 'node:net';
import { z } from 'zod';
import { flag, issuesOf, portNumber, secondsToMs } from './service-config.js';

/** DAG-level `smtp` after expansion. */
const smtpSchema = z.object({
  host: z.string().min(1),
  port: portNumber.optional(),
  username: z.string().optional(),
  password: z.string().optional(),
  secure: flag.optional(),
  tls_skip_verify: flag.optional(),
  timeout: secondsToMs.optional(),
});

export type SmtpSettings = z.output<typeof smtpSchema>;

export interface OutgoingMail {
  from: string;
  to: string[];
  subject: string;
  body: string;
  html: boolean;
  attachments: Array<{ filename: string; path: string }>;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** The server settings, or a message naming the bad field. */
export function smtpSettings(raw: Record<string, unknown> | undefined): SmtpSettings | string {
  if (raw === undefined) return 'no smtp server: the DAG needs smtp: {host: ...}';
  const parsed = smtpSchema.safeParse(raw);
  return parsed.success ? parsed.data : `invalid smtp settings: ${issuesOf(parsed.error, 'smtp')}`;
}

/** Where the mail goes, for logs: never the credentials. */
export function describeServer(smtp: SmtpSettings): string {
  return `${smtp.host}:${smtp.port ?? defaultPort(smtp)}`;
}

function defaultPort(smtp: SmtpSettings): number {
  return smtp.secure === true ? 465 : 587;
}

/**
 * Sends one mail; resolves with the server's message id. nodemailer is imported here, on the
 * first mail, so a host that sends none never loads it. A stop closes the connection.
 */
export async function sendMail(smtp: SmtpSettings, mail: OutgoingMail, signal?: AbortSignal): Promise<string> {
  const { createTransport } = await import('nodemailer');
  const timeout = smtp.timeout ?? DEFAULT_TIMEOUT_MS;
  // The transport's close() leaves a connection in use open, so the socket is made here: a stop destroys it rather than waiting for a silent server's timeout.
  const sockets = new Set<Socket>();
  const transport = createTransport({
    getSocket: (_options, callback) => {
      const socket = connect({ host: smtp.host, port: smtp.port ?? defaultPort(smtp) });
      sockets.add(socket);
      const timer = setTimeout(() => socket.destroy(new Error(`connection timed out after ${timeout / 1000} s`)), timeout);
      const onError = (error: Error): void => {
        clearTimeout(timer);
        callback(error, undefined);
      };
      socket.once('error', onError);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', onError);
        callback(null, { connection: socket });
      });
    },
    host: smtp.host,
    port: smtp.port ?? defaultPort(smtp),
    secure: smtp.secure ?? false,
    ...(smtp.username !== undefined ? { auth: { user: smtp.username, pass: smtp.password ?? '' } } : {}),
    tls: { rejectUnauthorized: smtp.tls_skip_verify !== true },
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  });
  const onAbort = (): void => {
    for (const socket of sockets) socket.destroy(new Error('stopped'));
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const info = await transport.sendMail({
      from: mail.from,
      to: mail.to,
      subject: mail.subject,
      ...(mail.html ? { html: mail.body } : { text: mail.body }),
      attachments: mail.attachments,
    });
    return info.messageId;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    transport.close();
    for (const socket of sockets) socket.destroy();
  }
}
