import { Option, type Command } from 'commander';
import type { RawWorkerConfig } from '@trellis/worker';
import { exitWith } from '../args.js';
import { keepYoungGenerationSmall } from '../young-generation.js';
import { bringBackOptimizingCompiler } from '../optimizing-compiler.js';

export function addWorkerCommand(program: Command): void {
  program
    .command('worker')
    .summary('run a worker daemon that takes runs from a coordinator')
    .description(
      `Runs a worker daemon: it registers with the coordinator's gRPC server, polls for runs whose worker_selector its labels match, runs them here and streams their status and logs back. If the coordinator goes away, running tasks go on and their reports are sent when it is back; given several coordinators of one database (a comma-separated list), the worker moves to the next one when the current one stays unreachable for 3 s, registers there and resends what was not confirmed. SIGTERM stops polling and lets running tasks finish (up to the grace period).`,
    )
    .option('--coordinator <host:port,...>', "the coordinator's gRPC address, or several coordinators of one database separated by commas, tried in turn (SVC_WORKER_COORDINATOR)")
    .option('--labels <k=v,k2=v2>', 'labels that worker_selector matches (SVC_WORKER_LABELS)')
    .option('--id <name>', 'worker id (default <hostname>-<pid>; SVC_WORKER_ID)')
    .option('--pollers <n>', 'runs at once (default 4; SVC_WORKER_POLLERS)')
    .option('--work-dir <dir>', 'where runs keep their files (default <tmp>/trellis-worker/<id>)')
    .option('--token <token>', "the coordinator's worker token (SVC_WORKER_TOKEN)")
    .option('--tls-ca <file>', "CA of the coordinator's certificate: connect with TLS")
    .option('--tls-cert <file>', 'client certificate, when the coordinator requires one')
    .option('--tls-key <file>', 'its private key')
    .option('--shutdown-grace-sec <n>', 'how long running tasks may finish after SIGTERM (default 60)')
    .addOption(new Option('--log-level <level>', 'default info (SVC_WORKER_LOG_LEVEL)').choices(['error', 'warn', 'info', 'debug']))
    .addHelpText('after', '\nExit status: 0 after a clean stop, 2 for bad configuration, 3 when the coordinator refused\nthe worker (its token or certificate).\n')
    .action(exitWith(workerCommand));
}

/** Flags as commander names them, the worker's raw config keys; loadWorkerConfig checks them all. */
export async function workerCommand(raw: RawWorkerConfig): Promise<number> {
  keepYoungGenerationSmall();
  // Loaded here, not with the program: a worker's resident memory is what it imports, and the
  // other commands' packages (the coordinator's database drivers, HTTP server) are no part of it.
  const { WorkerConfigError, WorkerDaemon, WorkerRefusedError, createWorkerLogger, loadWorkerConfig } = await import('@trellis/worker');
  let config;
  try {
    config = loadWorkerConfig(raw, process.env);
  } catch (error) {
    if (error instanceof WorkerConfigError) {
      process.stderr.write(`trellis worker: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const logger = createWorkerLogger(config.id, config.logLevel);
  const daemon = new WorkerDaemon(config, logger, { onEngineLoad: bringBackOptimizingCompiler });
  const shutdown = (signal: string): void => {
    logger.info('signal received', { signal });
    void daemon.shutdown();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  try {
    await daemon.start();
    await daemon.finished;
    return 0;
  } catch (error) {
    if (error instanceof WorkerRefusedError) {
      process.stderr.write(`trellis worker: ${error.message}\n`);
      return 3;
    }
    throw error;
  }
}
