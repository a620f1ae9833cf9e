import pg from 'pg';
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

/** A `pg` pool behind the Db interface. */
export async function openPg(options: PgOptions): Promise<Db> {
  if (options.schema !== undefined) {
    const setup = new pg.Client({ connectionString: options.connectionString });
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
  const query = async <T>(sql: string, params?: unknown[]): Promise<T[]> => (await withTransientRetry(() => pool.query(sql, params))).rows as T[];
  return {
    capabilities: CAPABILITIES.postgres,
    query,
    exec: async (sql) => {
      await pool.query(sql);
    },
    transaction: async <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({ query: async <R>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as R[] });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    listen: (channel, onNotify, onError) => listenOn(options, channel, onNotify, onError),
    close: () => pool.end(),
  };
}

const RELISTEN_MS = 1000;

/**
 * A dedicated connection (LISTEN holds its session). When it drops, it reconnects after a
 * pause and reports one notification, since any sent in between were lost.
 */
async function listenOn(options: PgOptions, channel: string, onNotify: (payload: string) => void, onError: (error: Error) => void): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: options.connectionString });
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify(message.payload ?? '');
    });
    next.on('error', (error) => {
      onError(error);
      void next.end().catch(() => undefined);
      if (!stopped) retry = setTimeout(() => void connect().then(() => onNotify(''), onError), RELISTEN_MS);
    });
    await next.connect();
    await next.query(`LISTEN ${quoteIdent(channel)}`);
    client = next;
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}
