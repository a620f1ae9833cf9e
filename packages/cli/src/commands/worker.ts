import { WorkerConfigError, WorkerDaemon, WorkerRefusedError, createWorkerLogger, loadWorkerConfig, type RawWorkerConfig } from '@trellis/worker';
import { parseCommandArgs, stringFlag, type OptionSpec } from '../args.js';

export const workerHelp = `Usage: trellis worker --coordinator HOST:PORT [options]

Runs a worker daemon: it registers with the coordinator's gRPC server, polls for runs whose
worker_selector its labels match, runs them here and streams their status and logs back.
If the coordinator goes away, running tasks go on and their reports are sent when it is
back. SIGTERM stops polling and lets running tasks finish (up to the grace period).

Options:
  --coordinator HOST:PORT  the coordinator's gRPC address (SVC_WORKER_COORDINATOR)
  --labels k=v,k2=v2       labels that worker_selector matches (SVC_WORKER_LABELS)
  --id NAME                worker id (default <hostname>-<pid>; SVC_WORKER_ID)
  --pollers N              runs at once (default 4; SVC_WORKER_POLLERS)
  --work-dir DIR           where runs keep their files (default <tmp>/trellis-worker/<id>)
  --token T                the coordinator's worker token (SVC_WORKER_TOKEN)
  --tls-ca FILE            CA of the coordinator's certificate: connect with TLS
  --tls-cert FILE          client certificate, when the coordinator requires one
  --tls-key FILE           its private key
  --shutdown-grace-sec N   how long running tasks may finish after SIGTERM (default 60)
  --log-level LEVEL        error, warn, info (default) or debug
  -h, --help               show this help
`;

const FLAGS = {
  coordinator: 'coordinator',
  labels: 'labels',
  id: 'id',
  pollers: 'pollers',
  'work-dir': 'workDir',
  token: 'token',
  'tls-ca': 'tlsCa',
  'tls-cert': 'tlsCert',
  'tls-key': 'tlsKey',
  'shutdown-grace-sec': 'shutdownGraceSec',
  'log-level': 'logLevel',
} as const satisfies Record<string, keyof RawWorkerConfig>;

const options: OptionSpec = Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, { type: 'string' }]));

export async function workerCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(argv, options);
  if (parsed.values.help === true) {
    process.stdout.write(workerHelp);
    return 0;
  }
  const raw: RawWorkerConfig = {};
  for (const [flag, key] of Object.entries(FLAGS)) {
    const value = stringFlag(parsed, flag);
    if (value !== undefined) raw[key] = value;
  }
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
  const daemon = new WorkerDaemon(config, logger);
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
