import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Option, type Command } from 'commander';
import { toError } from '@trellis/core/protocol';
import type { RawServerConfig } from '@trellis/coordinator';
import { exitWith, integerAtLeast } from '../args.js';
import { keepYoungGenerationSmall } from '../young-generation.js';

/** Flags as commander names them: each is the config key of the same name and wins over file and env. */
interface ServerOptions extends Partial<Omit<RawServerConfig, 'auth'>> {
  config?: string;
  authMode?: 'none' | 'basic' | 'builtin';
  allowUnauthenticated?: boolean;
}

/** `--auth-mode` and `--allow-unauthenticated` are the `auth` section's keys of those names. */
function toOverrides(options: Omit<ServerOptions, 'config'>): Partial<RawServerConfig> {
  const { authMode, allowUnauthenticated, ...rest } = options;
  const auth = { ...(authMode !== undefined ? { mode: authMode } : {}), ...(allowUnauthenticated !== undefined ? { allowUnauthenticated } : {}) };
  return Object.keys(auth).length > 0 ? { ...rest, auth } : rest;
}

export function addServerCommand(program: Command): void {
  program
    .command('server')
    .summary('run the coordinator (REST API, queues, local executor, worker gRPC) on this host')
    .description(
      `Runs the coordinator: the REST API and the web UI (at the base path, when packages/ui is built; uiDir / SVC_UI_DIR), the queues, the local executor that runs DAGs on this host, and the gRPC server that worker daemons ('trellis worker') poll for runs. Without a database URL it uses an embedded PostgreSQL (PGlite) under the data directory; SIGTERM (or Ctrl-C) stops it cleanly: nothing new starts, running local runs get shutdownGraceSec (default 20; SVC_SHUTDOWN_GRACE_SEC) to finish, the rest are stopped, then the database is closed; a second signal stops local runs at once. If it cannot start (a port in use, no database), it says why and exits with status 1.`,
    )
    .option('--config <file>', 'YAML configuration file (keys as in README; SVC_* env overrides it)')
    .option('--host <host>', 'address to bind (default 127.0.0.1; SVC_HOST)')
    .option('--port <port>', 'HTTP port (default 8080; SVC_PORT)', integerAtLeast(0))
    .option('--data-dir <dir>', 'data directory (default ./data; SVC_DATA_DIR)')
    .option('--dags-dir <dir>', 'DAG definitions directory (default ./dags; SVC_DAGS_DIR)')
    .option('--database-url <url>', 'PostgreSQL connection string (DATABASE_URL, SVC_DATABASE_URL)')
    .option('--grpc-host <host>', 'address the worker gRPC server binds (default 127.0.0.1; SVC_GRPC_HOST)')
    .option('--grpc-port <port>', 'worker gRPC port (default 50051; 0 picks one; -1 disables; SVC_GRPC_PORT)', integerAtLeast(-1))
    .option('--worker-token <token>', 'shared secret every worker must present (SVC_WORKER_TOKEN); required when --grpc-host is not loopback, unless client certificates are')
    .option('--grpc-tls-cert <file>', 'TLS certificate for the gRPC server (SVC_GRPC_TLS_CERT)')
    .option('--grpc-tls-key <file>', 'its private key (SVC_GRPC_TLS_KEY)')
    .option('--grpc-tls-client-ca <file>', 'require worker client certificates signed by this CA')
    .addOption(new Option('--auth-mode <mode>', 'who may call the API (default none; SVC_AUTH_MODE): none needs no credentials, basic one configured user (SVC_AUTH_BASIC_USERNAME + SVC_AUTH_BASIC_PASSWORD_HASH, _PASSWORD or _PASSWORD_FILE), builtin users in the database (first admin: POST /auth/setup)').choices(['none', 'basic', 'builtin']))
    .option('--allow-unauthenticated', 'accept auth mode none on an address beyond loopback (auth.allowUnauthenticated; SVC_AUTH_ALLOW_UNAUTHENTICATED); without it such a start is refused')
    .addOption(new Option('--log-level <level>', 'default info (SVC_LOG_LEVEL)').choices(['error', 'warn', 'info', 'debug']))
    .addOption(new Option('--log-format <format>', 'default json (SVC_LOG_FORMAT)').choices(['json', 'text']))
    .addHelpText('after', '\nAccess control: with auth mode none the server refuses to bind beyond loopback (--host) unless --allow-unauthenticated is given. See README, "Access control", for users, roles and tokens.\n\nExit status: 0 after a clean stop, 1 when the coordinator could not start, 2 for bad configuration.\n')
    .action(exitWith(serverCommand));
}

export async function serverCommand(options: ServerOptions): Promise<number> {
  const { config: file, ...flags } = options;
  const overrides = toOverrides(flags);
  keepYoungGenerationSmall();
  // Loaded when this command runs, so that `trellis worker` and the client commands do not hold it.
  const { ConfigError, createLogger, loadServerConfig, startCoordinator } = await import('@trellis/coordinator');
  let config;
  try {
    config = loadServerConfig({ ...(file !== undefined ? { file } : {}), env: process.env, overrides });
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
  const ui = existsSync(join(config.uiDir, 'index.html')) ? `; web UI at ${coordinator.apiUrl.slice(0, -config.apiBasePath.length)}/` : '';
  process.stdout.write(`Trellis is serving ${coordinator.apiUrl} (DAGs in ${config.dagsDir})${ui}\n`);
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
