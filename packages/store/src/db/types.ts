/** Something SQL can be sent to: the database, or one transaction on it. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

/**
 * Backend differences, in one place. PGlite is one session in this process: advisory locks
 * exclude nothing and statements are serialised, so embedded mode means one coordinator.
 */
export interface BackendCapabilities {
  name: 'postgres' | 'pglite';
  /** Advisory locks give mutual exclusion between processes. */
  advisoryLocks: boolean;
  /** More than one session can run statements at once. */
  concurrentSessions: boolean;
  /** LISTEN/NOTIFY reaches other processes. */
  crossProcessNotify: boolean;
}

export const CAPABILITIES: Record<BackendCapabilities['name'], BackendCapabilities> = {
  postgres: { name: 'postgres', advisoryLocks: true, concurrentSessions: true, crossProcessNotify: true },
  pglite: { name: 'pglite', advisoryLocks: false, concurrentSessions: false, crossProcessNotify: false },
};

export interface Db extends Queryable {
  readonly capabilities: BackendCapabilities;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * Calls `onNotify` for every NOTIFY on `channel` from any process; absent where
   * notifications cannot cross processes (PGlite). Resolves to the function that stops it.
   */
  listen?(channel: string, onNotify: (payload: string) => void, onError: (error: Error) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
