import { ConfigError, createLogger, loadServerConfig, startCoordinator, toError, type RawServerConfig } from '@trellis/coordinator';
import { intFlag, parseCommandArgs, stringFlag, type OptionSpec } from '../args.js';

export const serverHelp = `Usage: trellis server [options]

Runs the coordinator: the REST API, the queues and the local executor that runs DAGs on
this host. Without a database URL it uses an embedded PostgreSQL (PGlite) under the data
directory; SIGTERM stops it cleanly (running local steps are stopped, the database closed).

Options:
  --config FILE         YAML configuration file (keys as in README; SVC_* env overrides it)
  --host HOST           address to bind (default 127.0.0.1; SVC_HOST)
  --port PORT           HTTP port (default 8080; SVC_PORT)
  --data-dir DIR        data directory (default ./data; SVC_DATA_DIR)
  --dags-dir DIR        DAG definitions directory (default ./dags; SVC_DAGS_DIR)
  --database-url URL    PostgreSQL connection string (DATABASE_URL, SVC_DATABASE_URL)
  -h, --help            show this help
`;

const options: OptionSpec = {
  config: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'data-dir': { type: 'string' },
  'dags-dir': { type: 'string' },
  'database-url': { type: 'string' },
};

function overridesOf(parsed: ReturnType<typeof parseCommandArgs>): Partial<RawServerConfig> {
  const out: Partial<RawServerConfig> = {};
  const host = stringFlag(parsed, 'host');
  if (host !== undefined) out.host = host;
  const port = intFlag(parsed, 'port');
  if (port !== undefined) out.port = port;
  const dataDir = stringFlag(parsed, 'data-dir');
  if (dataDir !== undefined) out.dataDir = dataDir;
  const dagsDir = stringFlag(parsed, 'dags-dir');
  if (dagsDir !== undefined) out.dagsDir = dagsDir;
  const databaseUrl = stringFlag(parsed, 'database-url');
  if (databaseUrl !== undefined) out.databaseUrl = databaseUrl;
  return out;
}

export async function serverCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(argv, options);
  if (parsed.values.help === true) {
    process.stdout.write(serverHelp);
    return 0;
  }
  let config;
  try {
    const file = stringFlag(parsed, 'config');
    config = loadServerConfig({ ...(file !== undefined ? { file } : {}), env: process.env, overrides: overridesOf(parsed) });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`trellis server: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel, format: config.logFormat });
  const coordinator = await startCoordinator(config, logger).catch((error: unknown) => {
    logger.error('the coordinator could not start', { error: toError(error) });
    return undefined;
  });
  if (coordinator === undefined) return 1;
  process.stdout.write(`Trellis is serving ${coordinator.apiUrl} (DAGs in ${config.dagsDir})\n`);
  await new Promise<void>((resolve) => {
    const shutdown = (signal: string): void => {
      logger.info('shutting down', { signal });
      coordinator.close().then(resolve, resolve);
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
  return 0;
}
