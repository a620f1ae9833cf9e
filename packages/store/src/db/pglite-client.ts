import { extname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { toError } from '@trellis/core';
import { errorFrom, type PgliteReady, type PgliteReply, type PgliteRequest, type PgliteThreadData } from './pglite-messages.js';
import type { Queryable } from './types.js';

interface Pending {
  resolve(rows: unknown[]): void;
  reject(error: Error): void;
}

/**
 * The embedded database (PGlite) in a worker thread of its own, and this side of it: statements
 * go to the thread as messages and their rows come back. PGlite runs PostgreSQL compiled to
 * WebAssembly, synchronously, on the thread that calls it: on the coordinator's own thread, every
 * statement stopped the API, the executor and the dispatcher for its duration (0.4-1.5 ms each,
 * about three a one-step run), and with its statements that thread was the whole coordinator's
 * ceiling. On a thread of its own a statement costs this side a message each way.
 *
 * Statements run in the order they are sent, as before: the thread hands each to PGlite as it
 * arrives, and PGlite queues them (a statement outside a transaction waits for the open one).
 * The thread does not hold the process open: it is referenced only while a statement is pending.
 * Parameters and rows cross by structured clone: plain values, arrays, Dates, byte arrays.
 */
export class PgliteThread {
  private readonly pending = new Map<number, Pending>();
  private lastId = 0;
  private lastTx = 0;
  /** Why statements are refused: the thread stopped, or the database was closed. */
  private stopped: Error | undefined;
  private closing: Promise<void> | undefined;
  private readonly exited: Promise<void>;

  private constructor(
    private readonly worker: Worker,
    private readonly onError: ((error: Error) => void) | undefined,
  ) {
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (reply: PgliteReply) => this.settle(reply));
    worker.on('error', (error: unknown) => this.stop(toError(error)));
    worker.once('exit', (code) => this.stop(new Error(`the embedded database's thread stopped (exit code ${code})`)));
    worker.unref();
  }

  /**
   * Opens PGlite on its thread, over the cluster in `pgdata` (which must exist), or in memory.
   * `onError` hears of the thread stopping while the database is open.
   */
  static async start(pgdata: string | undefined, onError?: (error: Error) => void): Promise<PgliteThread> {
    const worker = threadWorker({ pgdata });
    let ready: PgliteReady;
    try {
      ready = await firstWord(worker);
    } catch (error) {
      await worker.terminate();
      throw error;
    }
    if (!ready.ready) {
      await worker.terminate();
      throw errorFrom(ready.error);
    }
    return new PgliteThread(worker, onError);
  }

  query<T>(sql: string, params: unknown[] | undefined): Promise<T[]> {
    return this.statement<T>(sql, params, undefined);
  }

  async exec(sql: string): Promise<void> {
    await this.call((id) => ({ id, op: 'exec', sql }));
  }

  /** Runs `fn` in one transaction, committed when it resolves and rolled back when it throws. */
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const tx = (this.lastTx += 1);
    await this.call((id) => ({ id, op: 'begin', tx }));
    let result: T;
    try {
      result = await fn({ query: <R>(sql: string, params?: unknown[]) => this.statement<R>(sql, params, tx) });
    } catch (error) {
      // The caller's error is the one to see; a failed rollback leaves nothing committed either.
      await this.call((id) => ({ id, op: 'end', tx, commit: false })).catch(() => undefined);
      throw error;
    }
    await this.call((id) => ({ id, op: 'end', tx, commit: true }));
    return result;
  }

  /** Closes the database and ends its thread; statements sent from now on are refused. Once: later calls wait for the same. */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    // A thread that has stopped has nothing to close.
    const closed = this.stopped === undefined ? this.call((id) => ({ id, op: 'close' })) : undefined;
    this.stopped ??= new Error('PGlite is closed');
    try {
      await closed;
    } finally {
      // The thread ends after its answer either way; until it has, it may still hold the files.
      this.worker.ref();
      await this.exited;
    }
  }

  /** A statement outside any transaction, or in transaction `tx`. */
  private statement<T>(sql: string, params: unknown[] | undefined, tx: number | undefined): Promise<T[]> {
    return this.call((id) => ({ id, op: 'query', sql, params, tx })) as Promise<T[]>;
  }

  private call(request: (id: number) => PgliteRequest): Promise<unknown[]> {
    if (this.stopped !== undefined) return Promise.reject(this.stopped);
    const id = (this.lastId += 1);
    if (this.pending.size === 0) this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      try {
        this.worker.postMessage(request(id));
      } catch (error) {
        // A parameter that cannot be copied (a function, say): nothing was sent.
        this.forget(id);
        reject(toError(error));
      }
    });
  }

  private forget(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
  }

  private settle(reply: PgliteReply): void {
    const pending = this.pending.get(reply.id);
    if (pending === undefined) return;
    this.forget(reply.id);
    if ('error' in reply) pending.reject(errorFrom(reply.error));
    else pending.resolve(reply.rows);
  }

  /** The thread is gone: what waits for it fails, and so does every later statement. */
  private stop(reason: Error): void {
    const unheard = this.stopped === undefined;
    this.stopped ??= reason;
    for (const pending of this.pending.values()) pending.reject(reason);
    this.pending.clear();
    if (unheard) this.onError?.(reason);
  }
}

/**
 * The thread, started from the built module, or from the TypeScript one when this one runs from
 * source (tests, benches): under tsx, whose loader Node 20 does not carry into worker threads, so
 * the thread registers it before loading its entry.
 */
function threadWorker(data: PgliteThreadData): Worker {
  const extension = extname(import.meta.url);
  const entry = new URL(`./pglite-thread${extension}`, import.meta.url);
  if (extension !== '.ts') return new Worker(entry, { workerData: data });
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(boot, { eval: true, workerData: data });
}

/** The thread's first message: whether PGlite opened; an error if the thread died before saying. */
function firstWord(worker: Worker): Promise<PgliteReady> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number): void => reject(new Error(`the embedded database's thread exited (exit code ${code}) before opening it`));
    const onError = (error: unknown): void => reject(toError(error));
    worker.once('error', onError);
    worker.once('exit', onExit);
    worker.once('message', (ready: PgliteReady) => {
      worker.off('error', onError);
      worker.off('exit', onExit);
      resolve(ready);
    });
  });
}
