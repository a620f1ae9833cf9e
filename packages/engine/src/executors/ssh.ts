import { readFile } from 'node:fs/promises';
import { Client, type ClientChannel, type ConnectConfig } from 'ssh2';
import { sshConfigSchema, toError, type SshConfig } from '@trellis/core';
import type { StepExecutionContext, StepExecutionResult, StepExecutor } from './types.js';
import { commandArgv } from './shell.js';
import { fingerprintOf, isKnownHostKey, knownHostName } from './ssh-known-hosts.js';
import { bareSignal, configIssues, flagOf, homePath, PidLineFilter, pidMarker, posixQuote } from './placement-support.js';

const READY_TIMEOUT_MS = 20_000;

interface SshTarget {
  host: string;
  port: number;
  user: string;
  /** Null when host keys are not checked (`strict_host_key: false`). */
  knownHostsFile: string | null;
  shell?: string[];
  auth: { privateKey?: Buffer; password?: string };
}

async function readKey(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new Error(`key ${path} cannot be read: ${toError(error).message}`);
  }
}

async function targetOf(ctx: StepExecutionContext): Promise<SshTarget> {
  const parsed = sshConfigSchema.safeParse(ctx.step.config);
  if (!parsed.success) throw new Error(`invalid ssh config: ${configIssues(parsed.error)}`);
  const config: SshConfig = parsed.data;
  if (config.host === undefined) throw new Error('invalid ssh config: host: is required');
  if (config.key === undefined && config.password === undefined) throw new Error('invalid ssh config: set key (a private key file) or password');
  const port = Number(config.port ?? 22);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`invalid ssh config: port: must be a port number from 1 to 65535, got "${String(config.port)}"`);
  const strict = flagOf(config.strict_host_key, 'strict_host_key') ?? true;
  const target: SshTarget = {
    host: config.host,
    port,
    user: config.user ?? ctx.env.USER ?? 'root',
    knownHostsFile: strict ? homePath(config.known_host_file ?? '~/.ssh/known_hosts', ctx.env) : null,
    auth: {},
  };
  const shell = config.shell ?? ctx.step.shell;
  if (shell !== undefined) target.shell = typeof shell === 'string' ? [shell] : shell;
  if (config.key !== undefined) target.auth.privateKey = await readKey(homePath(config.key, ctx.env));
  if (config.password !== undefined) target.auth.password = config.password;
  return target;
}

/** Accepts only keys listed in the known_hosts file; remembers a refused one for the error. */
async function hostVerifierOf(target: SshTarget): Promise<{ verify: ConnectConfig['hostVerifier']; refused: () => string | undefined }> {
  const file = target.knownHostsFile;
  if (file === null) return { verify: () => true, refused: () => undefined };
  let knownHosts: string;
  try {
    knownHosts = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`known_host_file ${file} cannot be read (${toError(error).message}); host keys are checked unless strict_host_key is false`);
  }
  const name = knownHostName(target.host, target.port);
  let refused: string | undefined;
  const verify = (key: Buffer): boolean => {
    if (isKnownHostKey(knownHosts, name, key)) return true;
    refused = `host key ${fingerprintOf(key)} of ${name} is not in ${file}; add it (ssh-keyscan -p ${target.port} ${target.host}) or set strict_host_key: false`;
    return false;
  };
  return { verify, refused: () => refused };
}

async function connect(target: SshTarget, signal: AbortSignal): Promise<Client> {
  const { verify, refused } = await hostVerifierOf(target);
  const client = new Client();
  const config: ConnectConfig = { host: target.host, port: target.port, username: target.user, readyTimeout: READY_TIMEOUT_MS, hostVerifier: verify, ...target.auth };
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      client.end();
      reject(new Error('stopped while connecting'));
    };
    if (signal.aborted) return reject(new Error('stopped while connecting'));
    signal.addEventListener('abort', onAbort, { once: true });
    client.once('ready', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(client);
    });
    client.once('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      reject(new Error(refused() ?? `cannot connect to ${target.user}@${target.host}:${target.port}: ${error.message}`));
    });
    client.connect(config);
  });
}

/**
 * The command line sent to the server. sshd starts every session in a new session and process
 * group led by the user's shell; the line prints that shell's pid (on stderr, behind a marker the
 * executor removes) and then execs the step's command in its place, so the pid names the process
 * group a stop must end. sshd forwards signal requests only for non-root logins, so a stop also
 * runs `kill` against that group over a second channel.
 */
export function remoteCommandLine(ctx: StepExecutionContext, shell: string[] | undefined, command: string, marker: string): string {
  const env = ctx.step.env.map((e) => `${e.key}=${e.value}`);
  const argv = [...(env.length > 0 ? ['env', ...env] : []), ...commandArgv(shell ?? ['sh'], command, ctx.positionalParams ?? [])];
  return `printf '%s%s\\n' ${marker} "$$" >&2; exec ${argv.map(posixQuote).join(' ')}`;
}


/** `kill -SIG -- -pid` over its own channel; a failure to send only leaves the remote process to its signal. */
function killRemoteGroup(client: Client, pid: number, signal: string): void {
  client.exec(`kill -${signal} -- -${pid}`, (error, channel) => {
    if (error === undefined) channel.resume().on('close', () => undefined);
  });
}

/**
 * sshd closes a session channel only once its command has exited, so a remote process no signal
 * reached would hold the step forever; this long after the KILL the connection is dropped instead.
 */
const ABANDON_AFTER_KILL_MS = 5_000;

function runRemote(client: Client, ctx: StepExecutionContext, shell: string[] | undefined, command: string): Promise<StepExecutionResult> {
  const marker = pidMarker();
  return new Promise((resolve, reject) => {
    client.exec(remoteCommandLine(ctx, shell, command, marker), (error, channel: ClientChannel) => {
      if (error !== undefined) return reject(error);
      const stderr = new PidLineFilter(marker, ctx.stderr);
      let exit: { code: number | null; signal?: string } = { code: null };
      const timers: NodeJS.Timeout[] = [];
      let settled = false;
      const finish = (): void => {
        if (settled) return;
        settled = true;
        timers.forEach(clearTimeout);
        ctx.signal.removeEventListener('abort', onAbort);
        stderr.flush();
        resolve(resultOf(exit, ctx.signal.aborted));
      };
      const onAbort = (): void => {
        const signal = bareSignal(ctx.stopSignal);
        channel.signal(signal);
        stderr.whenPid((pid) => killRemoteGroup(client, pid, signal));
        timers.push(setTimeout(() => {
          stderr.whenPid((pid) => killRemoteGroup(client, pid, 'KILL'));
          channel.close();
          timers.push(setTimeout(() => {
            ctx.stderr.write('ssh: the remote command did not end after KILL; connection dropped\n');
            client.destroy();
            finish();
          }, ABANDON_AFTER_KILL_MS));
        }, ctx.killAfterMs));
      };
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      // The remote command can start (and be stopped) before the client hears the exec succeeded;
      // a listener added to an already aborted signal never fires.
      if (ctx.signal.aborted) onAbort();
      channel.pipe(ctx.stdout, { end: false });
      channel.stderr.on('data', (chunk: Buffer) => stderr.write(chunk));
      channel.on('exit', (code: number | null, signal?: string) => {
        exit = signal !== undefined ? { code, signal } : { code };
      });
      channel.on('close', finish);
    });
  });
}

function resultOf(exit: { code: number | null; signal?: string }, stopped: boolean): StepExecutionResult {
  const exitCode = exit.code ?? 1;
  if (stopped) return { exitCode, stopped: true };
  if (exit.signal !== undefined) return { exitCode, error: `remote command ended by signal ${exit.signal}` };
  return exitCode === 0 ? { exitCode } : { exitCode, error: `exit status ${exitCode}` };
}

function failure(ctx: StepExecutionContext, error: string): StepExecutionResult {
  ctx.stderr.write(`ssh: ${error}\n`);
  return { exitCode: 1, error };
}

/**
 * `type: ssh`, and shell steps of a DAG with a DAG-level `ssh`: each command runs on the host
 * over one SSH connection, output streamed to the step's logs as it arrives. Host keys are
 * checked against `known_host_file` unless `strict_host_key: false`.
 */
export const sshExecutor: StepExecutor = {
  type: 'ssh',
  async run(ctx) {
    let client: Client | undefined;
    try {
      const target = await targetOf(ctx);
      client = await connect(target, ctx.signal);
      ctx.stderr.write(`ssh: connected to ${target.user}@${target.host}:${target.port}\n`);
      let last: StepExecutionResult = { exitCode: 0 };
      for (const command of ctx.step.commands) {
        last = await runRemote(client, ctx, target.shell, command);
        if (last.exitCode !== 0 || last.stopped === true) return last;
      }
      return last;
    } catch (error) {
      if (ctx.signal.aborted) return { exitCode: 1, stopped: true, error: 'stopped' };
      return failure(ctx, toError(error).message);
    } finally {
      client?.end();
    }
  },
};
