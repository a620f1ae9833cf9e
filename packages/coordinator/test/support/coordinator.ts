import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestDb } from '@trellis/store/testing';
import { createSilentLogger, loadServerConfig, startCoordinator, type Coordinator, type Logger, type RawServerConfig, type StartOptions } from '@trellis/coordinator';

export interface TestCoordinator {
  coordinator: Coordinator;
  dir: string;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }>;
  /** The run's record once its status is one of `statuses`; throws after `timeoutMs` (default 20 s). */
  waitForRunStatus(name: string, dagRunId: string, statuses: number[], timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/**
 * A coordinator on a fresh database (PGlite, or a schema of TRELLIS_TEST_DATABASE_URL) with the
 * given DAG files; or on `options.db`, which the caller opens and closes. Silent unless given `logger`.
 */
export async function startTestCoordinator(
  label: string,
  dags: Record<string, string>,
  overrides: Partial<RawServerConfig> = {},
  { logger = createSilentLogger(), ...options }: Pick<StartOptions, 'schedulerClock' | 'db' | 'watch' | 'syncPullWindow'> & { logger?: Logger } = {},
): Promise<TestCoordinator> {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-coord-'));
  mkdirSync(join(dir, 'dags'));
  for (const [name, yaml] of Object.entries(dags)) writeFileSync(join(dir, 'dags', `${name}.yaml`), yaml);
  const { db, cleanup } = options.db !== undefined ? { db: options.db, cleanup: () => Promise.resolve() } : await openTestDb(label);
  // No shutdown grace: stop() ends whatever a test left running at once.
  const config = loadServerConfig({ cwd: dir, env: {}, overrides: { port: 0, grpcPort: 0, dagsDir: join(dir, 'dags'), dataDir: join(dir, 'data'), timezone: 'UTC', shutdownGraceSec: 0, ...overrides } });
  const coordinator = await startCoordinator(config, logger, { watch: false, checkResponses: true, ...options, db });
  const call: TestCoordinator['call'] = async (method, path, body) => {
    const res = await fetch(coordinator.apiUrl + path, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  };
  return {
    coordinator,
    dir,
    call,
    waitForRunStatus: async (name, dagRunId, statuses, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const res = await call('GET', `/dag-runs/${name}/${dagRunId}`);
        const run = res.json.dagRun as Record<string, unknown> | undefined;
        if (run !== undefined && statuses.includes(run.status as number)) return run;
        if (Date.now() > deadline) throw new Error(`run ${dagRunId} never reached ${statuses.join('/')}: ${JSON.stringify(res.json)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: async () => {
      await coordinator.close();
      await cleanup();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
