// Worker thread: holds the embedded database (PGlite) and runs the statements the coordinator's
// thread sends it. See PgliteThread in pglite-client.ts for why it runs here.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { asError, errorData, type PgliteReady, type PgliteReply, type PgliteRequest, type PgliteThreadData } from './pglite-messages.js';
import { compileWasmWithBaselineOnly, PGLITE_START_PARAMS } from './pglite-settings.js';
import { PgliteStatements } from './pglite-statements.js';

/** Thrown inside a transaction's callback to have PGlite roll it back. */
class RollBack extends Error {}

/** A transaction the coordinator's thread holds open: the session, and how to end it. */
interface OpenTransaction {
  tx: Transaction;
  end(commit: boolean): void;
  /** Settles when PGlite has committed or rolled it back. */
  settled: Promise<void>;
}

class Session {
  private readonly statements: PgliteStatements;
  private readonly transactions = new Map<number, OpenTransaction>();

  constructor(private readonly db: PGlite) {
    this.statements = new PgliteStatements(db);
  }

  answer(request: PgliteRequest): Promise<unknown[]> {
    switch (request.op) {
      case 'query':
        return this.rowsOf(request.sql, request.params, request.tx);
      case 'exec':
        return this.db.exec(request.sql).then(() => []);
      case 'begin':
        return this.begin(request.tx);
      case 'end':
        return this.end(request.tx, request.commit);
      case 'close':
        return this.db.close().then(() => []);
    }
  }

  private async rowsOf(sql: string, params: unknown[] | undefined, txId: number | undefined): Promise<unknown[]> {
    const parameterised = params !== undefined && params.length > 0;
    if (txId === undefined) return parameterised ? this.statements.query(sql, params) : (await this.db.query(sql)).rows;
    const open = this.transactions.get(txId);
    if (open === undefined) throw new Error('Transaction is closed');
    return parameterised ? this.statements.queryInTransaction(open.tx, sql, params) : (await open.tx.query(sql)).rows;
  }

  /** Answered once the transaction holds the session; it stays open until `end`. */
  private begin(txId: number): Promise<unknown[]> {
    return new Promise((began, failed) => {
      let end: (commit: boolean) => void = () => undefined;
      const decided = new Promise<boolean>((resolve) => (end = resolve));
      const settled = this.db.transaction(async (tx) => {
        this.transactions.set(txId, { tx, end, settled });
        began([]);
        if (!(await decided)) throw new RollBack();
      });
      // A transaction that never began (the database closed) fails its `begin`; one that did, its `end`.
      settled.then(
        () => this.transactions.delete(txId),
        (error: unknown) => {
          this.transactions.delete(txId);
          failed(asError(error));
        },
      );
    });
  }

  private async end(txId: number, commit: boolean): Promise<unknown[]> {
    const open = this.transactions.get(txId);
    if (open === undefined) throw new Error('Transaction is closed');
    open.end(commit);
    try {
      await open.settled;
    } catch (error) {
      if (!(error instanceof RollBack)) throw error;
    }
    return [];
  }
}

async function open(port: MessagePort, pgdata: string | undefined): Promise<PGlite | undefined> {
  try {
    compileWasmWithBaselineOnly();
    return await PGlite.create({ ...(pgdata !== undefined ? { dataDir: pgdata } : {}), startParams: PGLITE_START_PARAMS });
  } catch (error) {
    port.postMessage({ ready: false, error: errorData(error) } satisfies PgliteReady);
    return undefined;
  }
}

function serve(port: MessagePort, session: Session): void {
  port.on('message', (request: PgliteRequest) => {
    // Not awaited: PGlite queues statements itself, in the order they arrive, as it did on the coordinator's thread.
    session
      .answer(request)
      .then(
        (rows) => port.postMessage({ id: request.id, rows } satisfies PgliteReply),
        (error: unknown) => port.postMessage({ id: request.id, error: errorData(error) } satisfies PgliteReply),
      )
      // Closed, the thread has nothing left to wait for, and ends.
      .finally(() => request.op === 'close' && port.close());
  });
  port.postMessage({ ready: true } satisfies PgliteReady);
}

const port = parentPort;
if (port === null) throw new Error('pglite-thread runs as a worker thread');
const db = await open(port, (workerData as PgliteThreadData).pgdata);
if (db === undefined) port.close();
else serve(port, new Session(db));
