import { PassThrough } from 'node:stream';
import Docker from 'dockerode';
import { containerSchemaFor, toError, type ContainerConfig, type ExecContainerConfig, type ImageContainerConfig } from '@trellis/core';
import type { StepExecutionContext, StepExecutionResult, StepExecutor } from './types.js';
import { commandArgv } from './shell.js';
import { bareSignal, configIssues, flagOf, PidLineFilter, pidMarker } from './placement-support.js';

/** How long a started container may take to be running, healthy, or to log its pattern (contract Limits). */
export const READINESS_TIMEOUT_MS = 120_000;
const POLL_MS = 250;

/** The Docker Engine API named by the step's DOCKER_HOST (unix:// or tcp://), else the local socket. */
function clientOf(env: Record<string, string>): Docker {
  const host = env.DOCKER_HOST ?? '';
  if (host.startsWith('unix://')) return new Docker({ socketPath: host.slice('unix://'.length) });
  if (host.startsWith('tcp://')) {
    const url = new URL(host.replace(/^tcp:/, 'http:'));
    return new Docker({ host: url.hostname, port: Number(url.port || 2375) });
  }
  return new Docker({ socketPath: '/var/run/docker.sock' });
}

function configOf(ctx: StepExecutionContext): ContainerConfig {
  const parsed = containerSchemaFor(ctx.step.config).safeParse(ctx.step.config);
  if (!parsed.success) throw new Error(`invalid container config: ${configIssues(parsed.error)}`);
  return parsed.data;
}

/** The config's own `env` as KEY=value entries. */
function configEnv(config: ContainerConfig): string[] {
  return config.env === undefined ? [] : Array.isArray(config.env) ? config.env : Object.entries(config.env).map(([k, v]) => `${k}=${String(v)}`);
}

/** The container's environment: its config `env`, then the step's own `env` entries. */
function envOf(config: ContainerConfig, ctx: StepExecutionContext): string[] {
  return [...configEnv(config), ...ctx.step.env.map((e) => `${e.key}=${e.value}`)];
}

function shellOf(config: ContainerConfig, ctx: StepExecutionContext): string[] {
  const shell = config.shell ?? ctx.step.shell ?? ['sh'];
  return typeof shell === 'string' ? [shell] : shell;
}

/** `8080:80`, `127.0.0.1:8080:80/udp` or `80`: exposed and, with a host port, published. */
function portsOf(ports: Array<string | number>): Pick<Docker.ContainerCreateOptions, 'ExposedPorts'> & { PortBindings: Record<string, Array<{ HostIp?: string; HostPort: string }>> } {
  const exposed: Record<string, object> = {};
  const bindings: Record<string, Array<{ HostIp?: string; HostPort: string }>> = {};
  for (const port of ports.map(String)) {
    const [spec, proto = 'tcp'] = port.split('/');
    const parts = (spec ?? '').split(':');
    const key = `${parts.at(-1) ?? ''}/${proto}`;
    exposed[key] = {};
    if (parts.length === 2) bindings[key] = [{ HostPort: parts[0] ?? '' }];
    if (parts.length === 3) bindings[key] = [{ HostIp: parts[0] ?? '', HostPort: parts[1] ?? '' }];
  }
  return { ExposedPorts: exposed, PortBindings: bindings };
}

async function ensureImage(docker: Docker, config: ImageContainerConfig, ctx: StepExecutionContext): Promise<void> {
  const policy = config.pull_policy ?? 'missing';
  const present = await docker
    .getImage(config.image)
    .inspect()
    .then(() => true)
    .catch(() => false);
  if (policy === 'never' && !present) throw new Error(`image ${config.image} is not present and pull_policy is never`);
  if (policy === 'missing' && present) return;
  ctx.stderr.write(`docker: pulling ${config.image}\n`);
  const stream = await docker.pull(config.image, config.platform !== undefined ? { platform: config.platform } : {});
  await new Promise<void>((resolve, reject) => docker.modem.followProgress(stream, (error) => (error ? reject(error) : resolve())));
}

/**
 * The container to create. `startup` decides its command: keepalive keeps it up for commands
 * exec'd in it, entrypoint runs the image's entrypoint with `command` as arguments; `command`
 * runs the step's commands (`stepArgv`) with `command` as entrypoint, or, for the run's shared
 * container, which has no commands of its own, `command` alone.
 */
function createOptions(config: ImageContainerConfig, env: string[], shell: string[], startup: string, stepArgv?: string[]): Docker.ContainerCreateOptions {
  const ports = portsOf(config.ports ?? []);
  const options: Docker.ContainerCreateOptions = {
    Image: config.image,
    Env: env,
    ExposedPorts: ports.ExposedPorts,
    HostConfig: {
      Binds: config.volumes ?? [],
      PortBindings: ports.PortBindings,
      RestartPolicy: { Name: config.restart_policy === 'no' || config.restart_policy === undefined ? '' : config.restart_policy },
      ...(config.network !== undefined ? { NetworkMode: config.network } : {}),
    },
  };
  if (config.name !== undefined) options.name = config.name;
  if (config.platform !== undefined) options.platform = config.platform;
  if (config.working_dir !== undefined) options.WorkingDir = config.working_dir;
  if (config.user !== undefined) options.User = config.user;
  const command = config.command === undefined ? undefined : typeof config.command === 'string' ? [config.command] : config.command;
  if (startup === 'keepalive') {
    // Kept alive by the shell the step's commands run in; a stop or removal ends it.
    options.Entrypoint = [...shell.slice(0, 1), '-c', 'trap "exit 0" TERM INT; while :; do sleep 1; done'];
  } else if (startup === 'entrypoint') {
    if (command !== undefined) options.Cmd = command;
  } else if (stepArgv !== undefined) {
    options.Cmd = stepArgv;
    if (command !== undefined) options.Entrypoint = command;
  } else if (command !== undefined) options.Entrypoint = command;
  return options;
}

/** Writes a multiplexed Docker stream to the step's logs; resolves when it ends. */
function forward(docker: Docker, stream: NodeJS.ReadableStream, stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream): Promise<void> {
  docker.modem.demuxStream(stream, stdout, stderr);
  return new Promise((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
}

/** A stop came while a container got ready. */
class ReadinessStopped extends Error {
  constructor() {
    super('stopped while waiting for the container');
  }
}

async function waitReady(container: Docker.Container, config: ImageContainerConfig, signal: AbortSignal): Promise<void> {
  const waitFor = config.wait_for ?? 'running';
  const pattern = config.log_pattern !== undefined ? new RegExp(config.log_pattern) : undefined;
  const deadline = Date.now() + READINESS_TIMEOUT_MS;
  for (;;) {
    if (signal.aborted) throw new ReadinessStopped();
    const state = (await container.inspect()).State;
    if (!state.Running) throw new Error(`container exited (status ${state.ExitCode}) before it was ready`);
    const stateReady = waitFor === 'running' || state.Health?.Status === 'healthy';
    const logReady = pattern === undefined || pattern.test((await container.logs({ stdout: true, stderr: true })).toString('utf8'));
    if (stateReady && logReady) return;
    if (Date.now() > deadline) {
      const what = [stateReady ? '' : waitFor, logReady ? '' : `log pattern /${config.log_pattern ?? ''}/`].filter(Boolean).join(' and ');
      throw new Error(`container not ${what} within ${READINESS_TIMEOUT_MS / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Runs one command in a running container. The process prints its pid first (taken out of the
 * log by the filter), so a stop can signal it with `kill` inside the container.
 */
async function execIn(docker: Docker, container: Docker.Container, config: ContainerConfig, ctx: StepExecutionContext, command: string): Promise<StepExecutionResult> {
  const marker = pidMarker();
  const argv = commandArgv(shellOf(config, ctx), command, ctx.positionalParams ?? []);
  const Cmd = ['sh', '-c', `printf '%s%s\\n' ${marker} "$$" >&2; exec "$@"`, 'sh', ...argv];
  const exec = await container.exec({ Cmd, AttachStdout: true, AttachStderr: true, Env: envOf(config, ctx), ...(config.user !== undefined ? { User: config.user } : {}), ...(config.working_dir !== undefined ? { WorkingDir: config.working_dir } : {}) });
  const stream = await exec.start({ hijack: true, stdin: false });
  const errFilter = new PidLineFilter(marker, ctx.stderr);
  const stderr = new PassThrough().on('data', (chunk: Buffer) => errFilter.write(chunk));
  const stdout = new PassThrough();
  stdout.pipe(ctx.stdout, { end: false });
  // The exec'd process leads its own process group (runc makes each exec a session): the
  // signal goes to the group, so what the command started ends with it; a runtime that does
  // not do so still has the process itself signalled.
  const kill = (signal: string): void =>
    errFilter.whenPid((pid) => {
      const Cmd = ['sh', '-c', `kill -${signal} -${pid} 2>/dev/null || kill -${signal} ${pid}`];
      void container.exec({ Cmd }).then((k) => k.start({ Detach: true })).catch(() => undefined);
    });
  let killTimer: NodeJS.Timeout | undefined;
  const onAbort = (): void => {
    kill(bareSignal(ctx.stopSignal));
    killTimer = setTimeout(() => kill('KILL'), ctx.killAfterMs);
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  // A stop that landed while the exec was being set up still reaches the process.
  if (ctx.signal.aborted) onAbort();
  try {
    await forward(docker, stream, stdout, stderr);
  } finally {
    clearTimeout(killTimer);
    ctx.signal.removeEventListener('abort', onAbort);
    errFilter.flush();
  }
  const exitCode = (await exec.inspect()).ExitCode ?? 1;
  if (ctx.signal.aborted) return { exitCode, stopped: true };
  return exitCode === 0 ? { exitCode } : { exitCode, error: `exit status ${exitCode}` };
}

async function execAll(docker: Docker, container: Docker.Container, config: ContainerConfig, ctx: StepExecutionContext): Promise<StepExecutionResult> {
  let last: StepExecutionResult = { exitCode: 0 };
  for (const command of ctx.step.commands) {
    last = await execIn(docker, container, config, ctx, command);
    if (last.exitCode !== 0 || last.stopped === true) return last;
  }
  return last;
}

async function runExecMode(docker: Docker, config: ExecContainerConfig, ctx: StepExecutionContext): Promise<StepExecutionResult> {
  const container = docker.getContainer(config.exec);
  const info = await container.inspect().catch((error: unknown) => {
    throw new Error(`container ${config.exec} cannot be used: ${toError(error).message}`);
  });
  if (!info.State.Running) throw new Error(`container ${config.exec} is not running`);
  return execAll(docker, container, config, ctx);
}

/** Runs the step's commands as the container's command; a stop signals the container. */
async function runAsCommand(docker: Docker, container: Docker.Container, ctx: StepExecutionContext): Promise<StepExecutionResult> {
  const stream = await container.attach({ stream: true, stdout: true, stderr: true });
  const streamed = forward(docker, stream, ctx.stdout, ctx.stderr);
  await container.start();
  const { StatusCode } = (await container.wait()) as { StatusCode: number };
  await streamed;
  if (ctx.signal.aborted) return { exitCode: StatusCode, stopped: true };
  return StatusCode === 0 ? { exitCode: 0 } : { exitCode: StatusCode, error: `exit status ${StatusCode}` };
}

async function runImageMode(docker: Docker, config: ImageContainerConfig, ctx: StepExecutionContext): Promise<StepExecutionResult> {
  await ensureImage(docker, config, ctx);
  const startup = config.startup ?? 'command';
  const joined = ctx.step.commands.length === 1 ? (ctx.step.commands[0] ?? '') : ctx.step.commands.join(' && ');
  const stepArgv = commandArgv(shellOf(config, ctx), joined, ctx.positionalParams ?? []);
  const container = await docker.createContainer(createOptions(config, envOf(config, ctx), shellOf(config, ctx), startup, stepArgv));
  ctx.stderr.write(`docker: container ${container.id.slice(0, 12)} from ${config.image}\n`);
  let killTimer: NodeJS.Timeout | undefined;
  const onAbort = (): void => {
    void container.kill({ signal: ctx.stopSignal }).catch(() => undefined);
    killTimer = setTimeout(() => void container.kill({ signal: 'SIGKILL' }).catch(() => undefined), ctx.killAfterMs);
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  // keep_container keeps a container that ran the commands; one that never became ready is of
  // no use to keep, and its configured `name` would clash with the next run's.
  let ran = false;
  try {
    // Stopped while the image was pulled or the container created: it never starts.
    if (ctx.signal.aborted) return { exitCode: 1, stopped: true };
    ran = startup === 'command';
    if (ran) return await runAsCommand(docker, container, ctx);
    await container.start();
    await waitReady(container, config, ctx.signal);
    ran = true;
    return await execAll(docker, container, config, ctx);
  } finally {
    clearTimeout(killTimer);
    ctx.signal.removeEventListener('abort', onAbort);
    if (!ran || flagOf(config.keep_container, 'keep_container') !== true) await container.remove({ force: true }).catch(() => undefined);
  }
}

/**
 * The run's one container of a DAG-level image-mode `container:`, started (keepalive unless
 * `startup` says otherwise) and made ready by the first step that runs in it, with the config's
 * own env only; each step passes its env to its exec. Removed when the run ends, unless
 * keep_container; also when it never became ready.
 */
async function startDagContainer(docker: Docker, config: ImageContainerConfig, ctx: StepExecutionContext, onRelease: (release: () => Promise<void>) => void): Promise<Docker.Container> {
  await ensureImage(docker, config, ctx);
  const container = await docker.createContainer(createOptions(config, configEnv(config), shellOf(config, ctx), config.startup ?? 'keepalive'));
  const keep = flagOf(config.keep_container, 'keep_container') === true;
  let removed = false;
  const remove = async (): Promise<void> => {
    if (removed) return;
    removed = true;
    await container.remove({ force: true });
  };
  if (!keep) onRelease(remove);
  ctx.stderr.write(`docker: run container ${container.id.slice(0, 12)} from ${config.image}\n`);
  try {
    await container.start();
    await waitReady(container, config, ctx.signal);
  } catch (error) {
    // Removed even with keep_container: a container that never became ready is of no use to
    // keep, and the next step that needs it (the exit handler after a stop, say) starts a new
    // one, whose configured `name` must be free again.
    await remove().catch(() => undefined);
    throw error;
  }
  return container;
}

/** Resolves as `pending` does, or rejects once `signal` is aborted: a stopped step waits no longer. */
function untilAborted<T>(pending: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(new Error('stopped while waiting for the run container'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function runInDagContainer(docker: Docker, config: ImageContainerConfig, ctx: StepExecutionContext): Promise<StepExecutionResult> {
  const resources = ctx.runResources;
  if (resources === undefined) return runImageMode(docker, config, ctx);
  for (;;) {
    let container: Docker.Container;
    try {
      container = await untilAborted(
        resources.shared('dag-container', (onRelease) => startDagContainer(docker, config, ctx, onRelease)),
        ctx.signal,
      );
    } catch (error) {
      // The step that started it was stopped while it got ready; this one (an exit handler, say) was not: it starts one anew.
      if (error instanceof ReadinessStopped && !ctx.signal.aborted) continue;
      throw error;
    }
    return execAll(docker, container, config, ctx);
  }
}

/**
 * `type: docker` (alias container), and shell steps with a step- or DAG-level `container`:
 * image mode starts a container from `image` (its commands as the container's command, or,
 * with startup keepalive/entrypoint, exec'd once it is ready); exec mode runs the commands in
 * the running container named by `exec`. Talks to the Docker Engine API named by DOCKER_HOST.
 */
export const dockerExecutor: StepExecutor = {
  type: 'docker',
  async run(ctx) {
    try {
      const config = configOf(ctx);
      flagOf('keep_container' in config ? config.keep_container : undefined, 'keep_container');
      const docker = clientOf(ctx.env);
      if ('exec' in config) return await runExecMode(docker, config, ctx);
      return ctx.inDagContainer === true ? await runInDagContainer(docker, config, ctx) : await runImageMode(docker, config, ctx);
    } catch (error) {
      if (ctx.signal.aborted) return { exitCode: 1, stopped: true, error: 'stopped' };
      const message = toError(error).message;
      ctx.stderr.write(`docker: ${message}\n`);
      return { exitCode: 1, error: message };
    }
  },
};
