import pg from 'pg';
import { toError } from '@trellis/core';
import { CAPABILITIES, type Db, type Queryable } from './types.js';
import { withTransientRetry } from './transient.js';

// int8 (bigserial ids, count(*)) as numbers: ids stay far below 2^53.
pg.types.setTypeParser(20, (value: string) => Number(value));

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export interface PgOptions {
  connectionString: string;
  /** Use (and create) this schema: tests isolate themselves this way. */
  schema?: string;
  max?: number;
  onError?: (error: Error) => void;
}

/**
 * Parameterised statements run as named prepared statements: each connection parses and plans
 * a statement once instead of on every call. The per-run statements are large CTEs (the
 * report upsert, the run insert), for which parsing and planning cost more than executing
 * (PostgreSQL CPU per distributed run fell from about 3.3 to 2.2 ms, measured). Every SQL
 * text keeps one name until the server refuses the cached plan, as `pg` requires.
 */
class PreparedStatements {
  private readonly names = new Map<string, string>();
  private made = 0;

  /** `inTransaction`: a failed statement aborted the transaction, so it is not tried again. */
  async run(send: (config: pg.QueryConfig) => Promise<pg.QueryResult>, text: string, values: unknown[] | undefined, inTransaction = false): Promise<pg.QueryResult> {
    if (values === undefined || values.length === 0) return send({ text });
    try {
      return await send({ name: this.nameOf(text), text, values });
    } catch (error) {
      // 0A000 "cached plan must not change result type": a migration altered a table under a
      // prepared statement (another coordinator upgraded the schema). A new name re-prepares it.
      if ((error as { code?: string }).code !== '0A000') throw error;
      this.names.delete(text);
      if (inTransaction) throw error;
      return send({ name: this.nameOf(text), text, values });
    }
  }

  private nameOf(text: string): string {
    let name = this.names.get(text);
    if (name === undefined) {
      name = `trellis_${(this.made += 1)}`;
      this.names.set(text, name);
    }
    return name;
  }
}

/** A `pg` pool behind the Db interface. */
export async function openPg(options: PgOptions): Promise<Db> {
  if (options.schema !== undefined) {
    const setup = new pg.Client({ connectionString: options.connectionString });
    // A lost connection also fails the statement in flight; unheard, its 'error' event would end the process.
    setup.on('error', () => undefined);
    await setup.connect();
    try {
      await setup.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(options.schema)}`).catch((error: unknown) => {
        // Two processes creating the same schema at once: the loser sees a unique violation, and the schema exists.
        if ((error as { code?: string }).code !== '23505') throw error;
      });
    } finally {
      await setup.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    ...(options.schema !== undefined ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // An idle client's error would otherwise crash the process.
  pool.on('error', (error) => options.onError?.(error));
  const statements = new PreparedStatements();
  const send = (config: pg.QueryConfig): Promise<pg.QueryResult> => pool.query(config);
  const query = async <T>(sql: string, params?: unknown[]): Promise<T[]> => (await withTransientRetry(() => statements.run(send, sql, params))).rows as T[];
  return {
    capabilities: CAPABILITIES.postgres,
    query,
    exec: async (sql) => {
      await pool.query(sql);
    },
    transaction: async <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> => {
      const client = await pool.connect();
      // A checked-out client has no pool listener: the connection lost mid-transaction (the
      // server stopping) would be an unheard 'error' event, which ends the process. Its next
      // statement fails anyway, and the broken client is destroyed instead of pooled again.
      let lost: Error | undefined;
      const onLost = (error: Error): void => {
        lost = error;
        options.onError?.(error);
      };
      client.on('error', onLost);
      // A statement on a transaction that has ended would run on a pooled connection another caller may hold.
      let ended = false;
      try {
        await client.query('BEGIN');
        const sendHere = (config: pg.QueryConfig): Promise<pg.QueryResult> => (ended ? Promise.reject(new Error('Transaction is closed')) : client.query(config));
        let result: T;
        try {
          result = await fn({ query: async <R>(sql: string, params?: unknown[]) => (await statements.run(sendHere, sql, params, true)).rows as R[] });
        } finally {
          // From here on, not even a statement the callback left running is sent: it would follow COMMIT outside the transaction.
          ended = true;
        }
        await client.query('COMMIT');
        return result;
      } catch (error) {
        if (lost === undefined) await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.removeListener('error', onLost);
        client.release(lost);
      }
    },
    listen: (channel, onNotify, onError) => listenOn(options, channel, onNotify, onError),
    close: () => pool.end(),
  };
}

const RELISTEN_MS = 1000;

/**
 * A dedicated connection (LISTEN holds its session). When it drops, it reconnects after a
 * pause, again and again while the server is away, and reports one notification, since any
 * sent in between were lost.
 */
async function listenOn(options: PgOptions, channel: string, onNotify: (payload: string) => void, onError: (error: Error) => void): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const reconnect = (): void => {
    if (stopped) return;
    retry = setTimeout(() => {
      connect().then(
        () => onNotify(''),
        (error: unknown) => {
          onError(toError(error));
          reconnect();
        },
      );
    }, RELISTEN_MS);
  };
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: options.connectionString });
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify(message.payload ?? '');
    });
    next.on('error', (error) => {
      onError(error);
      void next.end().catch(() => undefined);
      // Only the connection in use reconnects; one that fails while connecting is retried by its caller.
      if (client !== next) return;
      client = undefined;
      reconnect();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${quoteIdent(channel)}`);
    } catch (error) {
      await next.end().catch(() => undefined);
      throw error;
    }
    client = next;
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}
