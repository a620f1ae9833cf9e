// Benchmarks whose figures must not include a shared event loop run each part in a process of
// its own: a coordinator (coordinator-process.ts) and the HTTP client (latency-client.ts), forked
// with the bench's own Node options (tsx, source conditions) and driven over the IPC channel.
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { loadServerConfig } from '@trellis/coordinator';

/** A coordinator with its own DAGs and data directories (`dags-<id>`, `data-<id>`) under `dir`. */
export function benchServerConfig(dir: string, id: string) {
  return loadServerConfig({ cwd: dir, env: {}, overrides: { port: 0, grpcPort: 0, dagsDir: join(dir, `dags-${id}`), dataDir: join(dir, `data-${id}`), timezone: 'UTC', coordinatorId: id } });
}

export interface CoordinatorProcessOptions {
  dir: string;
  id: string;
  databaseUrl: string;
  schema: string;
}

/** What a check of each answer looks for (the client process cannot be handed a function). */
export type AnswerCheck = { kind: 'dags'; count: number } | { kind: 'runs'; count: number } | { kind: 'lastLine'; totalLines: number; line: string } | { kind: 'someLines' } | { kind: 'lineCount'; count: number };

export interface Measurement {
  url: string;
  /**
   * The request path; `{offset}` becomes a line offset spread over 1..offsetRange, different for
   * each request. A list: request i asks for path i mod its length, so consecutive requests (those
   * in flight together) ask for different things.
   */
  path: string | string[];
  offsetRange?: number;
  inFlight: number;
  warmup: number;
  measured: number;
  check: AnswerCheck;
}

export type ChildMessage =
  | { type: 'ready'; apiUrl: string; grpcAddress: string }
  | { type: 'listening' }
  | { type: 'cpu'; micros: number }
  | { type: 'times'; times: number[] }
  | { type: 'failed'; message: string };

/** A forked part of the bench: ask it something and wait for the answer; stop waits for its exit. */
export class BenchProcess {
  private readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** Forks `script` (a file beside this one) with `options` as JSON and waits for its first message. */
  static async start(script: string, options: unknown): Promise<{ process: BenchProcess; ready: ChildMessage }> {
    const child = fork(join(import.meta.dirname, script), [JSON.stringify(options)], { stdio: 'inherit' });
    const part = new BenchProcess(child);
    return { process: part, ready: await part.next() };
  }

  async ask(message: unknown): Promise<ChildMessage> {
    const answer = this.next();
    this.child.send(message as object);
    return answer;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.send({ type: 'stop' });
    await this.exited;
  }

  private next(): Promise<ChildMessage> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`bench process exited (${code}) before it answered`));
      this.child.once('exit', onExit);
      this.child.once('message', (message) => {
        this.child.off('exit', onExit);
        const answer = message as ChildMessage;
        if (answer.type === 'failed') reject(new Error(answer.message));
        else resolve(answer);
      });
    });
  }
}

/** A coordinator process of the bench and its addresses. */
export interface ServedCoordinator {
  process: BenchProcess;
  apiUrl: string;
  grpcAddress: string;
}

/** Forks coordinator-process.ts as coordinator `id` on `schema` and waits until it serves. */
export async function startCoordinatorProcess(options: CoordinatorProcessOptions): Promise<ServedCoordinator> {
  const { process: child, ready } = await BenchProcess.start('coordinator-process.ts', options);
  if (ready.type !== 'ready') throw new Error(`coordinator ${options.id} answered ${ready.type}`);
  return { process: child, apiUrl: ready.apiUrl, grpcAddress: ready.grpcAddress };
}

/** The CPU time (user and system) the coordinator process has used so far. */
export async function cpuMicros(c: ServedCoordinator): Promise<number> {
  const answer: ChildMessage = await c.process.ask({ type: 'cpu' });
  if (answer.type !== 'cpu') throw new Error(`cpu: coordinator answered ${answer.type}`);
  return answer.micros;
}
