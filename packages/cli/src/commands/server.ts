import { ConfigError, createLogger, loadServerConfig, startCoordinator, toError, type RawServerConfig } from '@trellis/coordinator';
import { intFlag, parseCommandArgs, stringFlag, type OptionSpec } from '../args.js';

export const serverHelp = `Usage: trellis server [options]

Runs the coordinator: the REST API, the queues, the local executor that runs DAGs on
this host, and the gRPC server that worker daemons ('trellis worker') poll for runs. Without a database URL it uses an embedded PostgreSQL (PGlite) under the data
directory. SIGTERM (or Ctrl-C) stops it cleanly: nothing new starts, running local runs get
shutdownGraceSec (default 20; SVC_SHUTDOWN_GRACE_SEC) to finish, the rest are stopped, then the
database is closed; a second signal stops local runs at once. If it cannot start (a port in
use, no database), it says why and exits with status 1.

Options:
  --config FILE         YAML configuration file (keys as in README; SVC_* env overrides it)
  --host HOST           address to bind (default 127.0.0.1; SVC_HOST)
  --port PORT           HTTP port (default 8080; SVC_PORT)
  --data-dir DIR        data directory (default ./data; SVC_DATA_DIR)
  --dags-dir DIR        DAG definitions directory (default ./dags; SVC_DAGS_DIR)
  --database-url URL    PostgreSQL connection string (DATABASE_URL, SVC_DATABASE_URL)
  --grpc-host HOST      address the worker gRPC server binds (default 127.0.0.1; SVC_GRPC_HOST)
  --grpc-port PORT      worker gRPC port (default 50051; 0 picks one; -1 disables; SVC_GRPC_PORT)
  --worker-token T      shared secret every worker must present (SVC_WORKER_TOKEN); required
                        when --grpc-host is not loopback, unless client certificates are
  --grpc-tls-cert FILE  TLS certificate for the gRPC server (SVC_GRPC_TLS_CERT)
  --grpc-tls-key FILE   its private key (SVC_GRPC_TLS_KEY)
  --grpc-tls-client-ca FILE  require worker client certificates signed by this CA
  -h, --help            show this help
`;

const options: OptionSpec = {
  config: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'data-dir': { type: 'string' },
  'dags-dir': { type: 'string' },
  'database-url': { type: 'string' },
  'grpc-host': { type: 'string' },
  'grpc-port': { type: 'string' },
  'worker-token': { type: 'string' },
  'grpc-tls-cert': { type: 'string' },
  'grpc-tls-key': { type: 'string' },
  'grpc-tls-client-ca': { type: 'string' },
};

const STRING_FLAGS = {
  host: 'host',
  'data-dir': 'dataDir',
  'dags-dir': 'dagsDir',
  'database-url': 'databaseUrl',
  'grpc-host': 'grpcHost',
  'worker-token': 'workerToken',
  'grpc-tls-cert': 'grpcTlsCert',
  'grpc-tls-key': 'grpcTlsKey',
  'grpc-tls-client-ca': 'grpcTlsClientCa',
} as const satisfies Record<string, keyof RawServerConfig>;

function overridesOf(parsed: ReturnType<typeof parseCommandArgs>): Partial<RawServerConfig> {
  const out: Partial<RawServerConfig> = {};
  for (const [flag, key] of Object.entries(STRING_FLAGS)) {
    const value = stringFlag(parsed, flag);
    if (value !== undefined) out[key] = value;
  }
  const port = intFlag(parsed, 'port');
  if (port !== undefined) out.port = port;
  const grpcPort = intFlag(parsed, 'grpc-port', { allowNegative: true });
  if (grpcPort !== undefined) out.grpcPort = grpcPort;
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
    let stopping = false;
    const shutdown = (signal: string): void => {
      if (stopping) {
        logger.warn('second signal: stopping local runs now', { signal });
        coordinator.abortLocalRuns();
        return;
      }
      stopping = true;
      logger.info('shutting down: no new work; local runs may finish within the grace', { signal, graceSec: config.shutdownGraceSec });
      coordinator.close().then(resolve, resolve);
    };
    process.on('SIGTERM', () => shutdown('SIGTERM'));
    process.on('SIGINT', () => shutdown('SIGINT'));
  });
  return 0;
}
