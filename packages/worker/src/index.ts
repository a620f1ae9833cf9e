export { WorkerDaemon, WorkerRefusedError, WORKER_VERSION, type WorkerDaemonOptions } from './daemon.js';
export { loadWorkerConfig, parseLabels, WorkerConfigError, type WorkerConfig, type RawWorkerConfig } from './config.js';
export { createWorkerLogger, type Logger } from './logging.js';
export { CoordinatorClient } from './grpc/client.js';
