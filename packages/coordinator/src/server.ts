import type { ProfileService } from './profiles/profile-service.js';
import type { AddressInfo } from 'node:net';
import type { Db } from '@trellis/store';
import { apiMountPath } from './http/app.js';
import type { DagIndex } from './definitions/dag-index.js';
import type { DocumentStore } from './documents/document-store.js';
import type { Scheduler } from './scheduler/scheduler.js';
import type { SchedulerClock } from './scheduler/clock.js';
import type { ApiKeyService } from './auth/api-keys.js';
import { checkHttpExposure, isLoopbackHost } from './auth/exposure.js';
import type { ServerConfig } from './config/load.js';
import type { Logger } from './logging/logger.js';
import { CoordinatorLifecycle } from './lifecycle/coordinator-lifecycle.js';

export { VERSION } from './lifecycle/assembly.js';

export interface Coordinator {
  /** Base URL of the API, e.g. http://127.0.0.1:8080/api/v1. */
  apiUrl: string;
  index: DagIndex;
  /** Documents (the docs directory of the contract), stored in the database like definitions. */
  documents: DocumentStore;
  db: Db;
  /** Where workers connect (host:port), when the gRPC server runs. */
  grpcAddress?: string;
  scheduler: Scheduler;
  /**
   * Stops taking work (scheduler, admission, hand-outs to workers), lets local runs finish
   * within `shutdownGraceSec` and stops the rest, then closes the API, the gRPC server and the
   * database. Calling it again waits for the same shutdown.
   */
  close(): Promise<void>;
  /** API keys: `authenticateApiKey(token)` is what the authentication step calls for `Bearer svc_...`. */
  apiKeys: ApiKeyService;
  /** Runtime profiles: what a run start asks (`mayUse`, `resolve`). */
  profiles: ProfileService;
  /** Cuts a shutdown's grace short: local runs are stopped now (a second signal). */
  abortLocalRuns(): void;
}

export interface StartOptions {
  watch?: boolean;
  /** An already-open database (tests); default: opened from the configuration. */
  db?: Db;
  /** The scheduler's clock (tests drive ticks by hand); default: real time, or the configured test speed-up. */
  schedulerClock?: SchedulerClock;
  /** Check every JSON answer against its route's declared response schema (tests). */
  checkResponses?: boolean;
  /** Awaited by a repository pull between its plan and its write (tests land an edit in that window). */
  syncPullWindow?: () => Promise<void>;
}

/** Workers on other hosts must prove who they are: a token or a client certificate. */
function checkWorkerSecurity(config: ServerConfig): void {
  if (config.grpcPort >= 0 && !isLoopbackHost(config.grpcHost) && config.workerToken === undefined && config.grpcTlsClientCa === undefined) {
    throw new Error(`the worker gRPC server listens on ${config.grpcHost}, beyond loopback: set workerToken (--worker-token, SVC_WORKER_TOKEN) or grpcTlsClientCa`);
  }
}

/**
 * Starts the coordinator: its parts are assembled and started in order by its lifecycle
 * (database, DAG index, workers' side, API, admission with the local executor, scheduler).
 * A start that fails closes whatever it had opened before it rethrows, so the process can exit.
 */
export async function startCoordinator(config: ServerConfig, logger: Logger, options: StartOptions = {}): Promise<Coordinator> {
  checkWorkerSecurity(config);
  checkHttpExposure(config);
  const lifecycle = new CoordinatorLifecycle(config, logger);
  const { parts, server, grpc } = await lifecycle.start(options);
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const apiUrl = `http://${host}:${port}${apiMountPath(config)}`;
  logger.info('coordinator listening', { apiUrl, dagsDir: config.dagsDir, database: parts.db.capabilities.name });
  return {
    apiUrl,
    index: parts.index,
    documents: parts.documents,
    db: parts.db,
    ...(grpc !== undefined ? { grpcAddress: grpc.address } : {}),
    scheduler: parts.scheduler,
    apiKeys: parts.apiKeys,
    profiles: parts.profiles,
    close: async () => {
      await lifecycle.close();
      logger.info('coordinator stopped');
    },
    abortLocalRuns: () => lifecycle.abortLocalRuns(),
  };
}
