import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DISPATCH_CHANNEL, failInterruptedRuns, openDatabase, recordEvent, releaseLease, type Db } from '@trellis/store';
import { toError } from '@trellis/core';
import { createHttpApp, apiMountPath } from './http/app.js';
import { DagFiles } from './definitions/dag-files.js';
import { DagIndex } from './definitions/dag-index.js';
import { dagRoutes } from './api/dags.routes.js';
import { DagCommands } from './definitions/dag-commands.js';
import { DagQueries } from './definitions/dag-queries.js';
import { runRoutes } from './api/runs.routes.js';
import { systemRoutes } from './api/system.routes.js';
import { DatabaseProbe } from './health/database-probe.js';
import { ServiceHealth } from './health/service-health.js';
import { Dispatcher } from './runs/dispatcher.js';
import { LocalExecutor, localWorkerId, type ChildRunQueue } from './runs/local-executor.js';
import { RunService } from './runs/run-service.js';
import { RunCommands } from './runs/run-commands.js';
import { RunQueries } from './runs/run-queries.js';
import { QueueQueries } from './runs/queue-queries.js';
import { SubRuns } from './runs/sub-runs.js';
import { startRetention } from './runs/retention.js';
import { SpecCache } from './runs/spec-cache.js';
import { QueueLimits } from './dispatch/placement.js';
import { RemotePollers } from './dispatch/remote-pollers.js';
import { RemoteWorkers } from './dispatch/remote-workers.js';
import { ReportApplier } from './dispatch/report-applier.js';
import { WorkerRegistry } from './dispatch/worker-registry.js';
import { ConnectedWorkers } from './dispatch/connected-workers.js';
import { startWorkerMonitor } from './dispatch/worker-monitor.js';
import { startGrpcServer, type GrpcServer } from './grpc/server.js';
import { workerHandlers } from './grpc/worker-service.js';
import { workerRoutes } from './api/workers.routes.js';
import { queueRoutes } from './api/queues.routes.js';
import { schedulerRoutes } from './api/scheduler.routes.js';
import { metricsRoutes } from './api/metrics.routes.js';
import { resourceRoutes } from './api/resources.routes.js';
import { eventRoutes } from './api/events.routes.js';
import { streamRoutes } from './api/streams.routes.js';
import { apiKeyRoutes } from './api/api-keys.routes.js';
import { webhookRoutes } from './api/webhooks.routes.js';
import { ApiKeyService } from './auth/api-keys.js';
import { WebhookService } from './webhooks/webhook-service.js';
import { RunEventHub } from './runs/run-event-hub.js';
import { EventLog } from './runs/event-log.js';
import { ResourceHistory } from './metrics/resource-history.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { Scheduler } from './scheduler/scheduler.js';
import { SchedulerLeadership } from './scheduler/leadership.js';
import { SchedulerPause } from './scheduler/pause.js';
import { realClock, scaledClock, type SchedulerClock } from './scheduler/clock.js';
import type { ServerConfig } from './config/load.js';
import type { Logger } from './logging/logger.js';
import { ShutdownStack } from './lifecycle/shutdown-stack.js';
import { checkHttpExposure } from './auth/exposure.js';
import { openAccessControl } from './auth/access-service.js';
import type { ApiKeyResolver } from './auth/authenticator.js';
import { authRoutes } from './api/auth.routes.js';
import { userRoutes } from './api/users.routes.js';
import { oidcRoutes } from './api/oidc.routes.js';

export const VERSION = '0.1.0';

export interface Coordinator {
  /** Base URL of the API, e.g. http://127.0.0.1:8080/api/v1. */
  apiUrl: string;
  index: DagIndex;
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
  /** Resolves `Bearer svc_...` secrets (API keys, webhook tokens) to principals; without it they are refused. */
  apiKeys?: ApiKeyResolver;
}

/** Local runs the previous process was running when it died cannot be resumed: they are failed, with a reason. */
const INTERRUPTED = 'the coordinator stopped while this run was running';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** Workers on other hosts must prove who they are: a token or a client certificate. */
function checkWorkerSecurity(config: ServerConfig): void {
  if (config.grpcPort >= 0 && !LOOPBACK.has(config.grpcHost) && config.workerToken === undefined && config.grpcTlsClientCa === undefined) {
    throw new Error(`the worker gRPC server listens on ${config.grpcHost}, beyond loopback: set workerToken (--worker-token, SVC_WORKER_TOKEN) or grpcTlsClientCa`);
  }
}

/** Why a listener could not open, naming the address; "address already in use" rather than errno text. */
function listenError(what: string, host: string, port: number, error: Error): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code === 'EADDRINUSE' ? 'address already in use' : code === 'EADDRNOTAVAIL' ? 'address not available on this host' : error.message;
  return new Error(`cannot listen for ${what} on ${host.includes(':') ? `[${host}]` : host}:${port}: ${reason}`, { cause: error });
}

async function listenHttp(app: ReturnType<typeof createHttpApp>, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const listening = app.listen(port, host);
    listening.once('listening', () => resolve(listening));
    listening.once('error', (error) => reject(listenError('HTTP', host, port, error)));
  });
}

/**
 * Starts the coordinator: database, DAG index, dispatcher with the local executor, then the API.
 * A start that fails closes whatever it had opened before it rethrows, so the process can exit.
 */
export async function startCoordinator(config: ServerConfig, logger: Logger, options: StartOptions = {}): Promise<Coordinator> {
  checkWorkerSecurity(config);
  checkHttpExposure(config);
  const opened = new ShutdownStack(logger);
  try {
    return await startParts(config, logger, options, opened);
  } catch (error) {
    await opened.close();
    throw error;
  }
}

async function openConfiguredDatabase(config: ServerConfig, logger: Logger): Promise<Db> {
  try {
    return await openDatabase({
      ...(config.databaseUrl !== undefined ? { databaseUrl: config.databaseUrl } : { dataDir: config.dataDir }),
      onPoolError: (error) => logger.error('database connection error', { error }),
    });
  } catch (error) {
    const where = config.databaseUrl !== undefined ? 'the PostgreSQL database' : `the embedded database under ${config.dataDir}`;
    throw new Error(`cannot open ${where}: ${toError(error).message}`, { cause: error });
  }
}

async function startParts(config: ServerConfig, logger: Logger, options: StartOptions, opened: ShutdownStack): Promise<Coordinator> {
  const db = options.db ?? (await openConfiguredDatabase(config, logger));
  if (options.db === undefined) opened.push('database', () => db.close());
  const localId = localWorkerId(config.coordinatorId ?? `${hostname()}:${config.port}`);
  const interrupted = await failInterruptedRuns(db, localId, INTERRUPTED);
  if (interrupted.failed.length > 0) logger.warn('failed runs cut off by the previous shutdown', { count: interrupted.failed.length, childrenStopped: interrupted.childrenStopped });
  const files = new DagFiles(config.dagsDir);
  const index = new DagIndex(files, logger, config.baseConfig);
  opened.push('DAG index', () => index.stop());
  await index.start({ watch: options.watch ?? true });
  index.onChange((fileName, entry) => {
    const event = { kind: 'dag', type: entry === undefined ? 'dag.definition.deleted' : 'dag.definition.changed', dagName: entry?.name ?? fileName, message: `definition ${fileName} ${entry === undefined ? 'removed' : 'changed'}`, data: { fileName } };
    recordEvent(db, event).catch((error: unknown) => logger.warn('could not record a definition event', { fileName, error: toError(error) }));
  });
  const globalQueues = new Map(config.queues.map((q) => [q.name, q.maxConcurrency]));
  const queueLimits = new QueueLimits(globalQueues, () => index.all().flatMap((e): Array<[string, number]> => (e.result.dag?.maxActiveRuns !== undefined ? [[e.name, e.result.dag.maxActiveRuns]] : [])));
  index.onChange(() => queueLimits.invalidate());
  const queueLimit = (queueName: string): number => queueLimits.limitOf(queueName);
  const specOfDag = (name: string) => index.all().find((e) => e.name === name || e.fileName === name)?.text;
  const registry = new WorkerRegistry(db);
  const specs = new SpecCache(db);
  let peers: number | undefined;
  const instanceId = randomUUID();
  const startedAt = new Date();
  const leadership = new SchedulerLeadership(db, instanceId, config.schedulerLeaseTtlMs, logger);
  const metrics = new ServiceMetrics({
    db,
    logger,
    version: VERSION,
    startedAt,
    registry,
    dagCount: () => index.all().length,
    schedulerRunning: () => config.schedulerEnabled && leadership.current !== undefined,
  });
  const executor = new LocalExecutor({
    db,
    logger,
    logDir: config.logDir,
    dagsDir: config.dagsDir,
    docsDir: config.docsDir,
    envPassthrough: config.envPassthrough,
    envPassthroughPrefixes: config.envPassthroughPrefixes,
    specOfDag,
    specs,
    workerId: localId,
    observer: metrics,
    // Called only once runs exist, after the dispatcher below is constructed.
    onFinished: () => dispatcher.wake('slot'),
    // Likewise: sub-DAG steps that name worker labels queue their children through the run service below.
    childRuns: (): ChildRunQueue => runs,
  });
  const remote = new RemotePollers({
    db,
    logger,
    limits: queueLimits,
    release: (run) => releaseLease(db, run.id, run.attemptId),
  });
  const dispatcher = new Dispatcher({ db, executor, workerId: localId, logger, limits: queueLimits, remote });
  const grpcWanted = config.grpcPort >= 0;
  const runs = new RunService({
    db,
    dispatcher,
    executor,
    logDir: config.logDir,
    globalQueues,
    defaultExecutionMode: config.defaultExecutionMode,
    conditions: { db, registry, queueLimit, grpcRunning: grpcWanted },
    instanceId,
    // Until the first monitor check says otherwise, assume there are peers: a notification too many costs little.
    hasPeers: () => peers !== 0,
    specOfDag,
  });
  let grpc: GrpcServer | undefined;
  // Cached attempts are trusted for half the heartbeat timeout after the worker's last heartbeat (see ReportApplier).
  const applier = new ReportApplier(db, metrics, config.workerHeartbeatTimeoutSec * 500);
  if (grpcWanted) {
    const workers = new RemoteWorkers({ db, logger, registry, pollers: remote, applier, specs, dagsDir: config.dagsDir, observer: metrics, wake: (reason) => dispatcher.wake(reason) });
    const handlers = workerHandlers({ workers, subRuns: new SubRuns({ db, logger, runs }) });
    const security = { ...(config.workerToken !== undefined ? { workerToken: config.workerToken } : {}), ...(config.grpcTlsCert !== undefined ? { tlsCert: config.grpcTlsCert } : {}), ...(config.grpcTlsKey !== undefined ? { tlsKey: config.grpcTlsKey } : {}), ...(config.grpcTlsClientCa !== undefined ? { tlsClientCa: config.grpcTlsClientCa } : {}) };
    const started = await startGrpcServer(config.grpcHost, config.grpcPort, security, handlers, logger);
    grpc = started;
    opened.push('worker gRPC server', () => started.close());
    logger.info('worker gRPC server listening', { address: grpc.address, tls: security.tlsCert !== undefined, token: security.workerToken !== undefined });
  }
  const clock = options.schedulerClock ?? (config.schedulerClockSpeed > 1 ? scaledClock(new Date(config.schedulerClockAnchor ?? Date.now()), config.schedulerClockSpeed) : realClock);
  const scheduler = new Scheduler({ db, logger, index, runs, clock, leadership, timezone: config.timezone });
  // The monitor heartbeats for the local executor: it runs until the local runs are drained.
  const stopMonitor = await startWorkerMonitor({ db, logger, localWorkerId: localId, onPeers: (count) => (peers = count), onPruned: (ids) => ids.forEach((id) => registry.forget(id)), ackTimeoutSec: config.workerAckTimeoutSec, heartbeatTimeoutSec: config.workerHeartbeatTimeoutSec, onChange: () => dispatcher.wake() });
  opened.push('worker monitor', stopMonitor);
  const unlisten = db.listen !== undefined ? await db.listen(DISPATCH_CHANNEL, (sender) => sender !== instanceId && dispatcher.wake(), (error) => logger.warn('dispatch notifications interrupted; reconnecting', { error })) : undefined;
  if (unlisten !== undefined) opened.push('dispatch notifications', unlisten);
  const runEvents = new RunEventHub(db, logger);
  const resources = new ResourceHistory(config.dataDir, logger);
  resources.start();
  opened.push('resource history', () => resources.stop());
  const queries = new RunQueries({ db, runs });
  const apiKeys = new ApiKeyService({ db, logger });
  opened.push('API key use times', () => apiKeys.stop());
  const webhooks = new WebhookService({
    db,
    runs,
    definition: (fileName) => {
      const entry = index.get(fileName);
      return entry !== undefined ? { text: entry.text, dag: entry.result.dag, errors: entry.result.errors } : undefined;
    },
  });
  const access = await openAccessControl(config.auth, db, (token) => apiKeys.authenticateApiKey(token));
  const routes = [
    ...systemRoutes(new ServiceHealth({ version: VERSION, startedAt, database: new DatabaseProbe(db) })),
    ...authRoutes(access.users),
    ...userRoutes(access.users),
    ...oidcRoutes(access.oidc, config.auth.oidc?.redirectUrl),
    ...metricsRoutes(metrics, config.metrics),
    ...resourceRoutes(resources),
    ...eventRoutes(new EventLog(db)),
    ...streamRoutes(runEvents),
    ...dagRoutes({ queries: new DagQueries({ db, index, runs, runQueries: queries, schedule: scheduler }), commands: new DagCommands({ db, files, index, runs, schedule: scheduler }) }),
    ...schedulerRoutes({ pause: new SchedulerPause(db) }),
    ...runRoutes({ commands: new RunCommands({ db, index, runs, queries, executor }), queries }),
    ...workerRoutes(new ConnectedWorkers(registry, grpc !== undefined)),
    ...queueRoutes(new QueueQueries({ db, globalQueues, isDag: (name) => index.all().some((e) => e.name === name) })),
    ...apiKeyRoutes(apiKeys),
    ...webhookRoutes(webhooks),
  ];
  const app = createHttpApp({
    routes,
    logger,
    basePath: config.basePath,
    apiBasePath: config.apiBasePath,
    version: VERSION,
    checkResponses: options.checkResponses ?? false,
    accessLog: config.accessLog,
    browser: { allowedHosts: [...config.allowedHosts, config.host], allowedOrigins: config.allowedOrigins },
    authenticate: (authorization, address) => access.authenticator.authenticate(authorization, address),
    observe: (method, route, status, seconds) => metrics.httpDuration.observe({ method, route, status: String(status) }, seconds),
  });
  const server = await listenHttp(app, config.host, config.port);
  // The API keeps answering while local runs drain (their status, stop requests); then it closes.
  opened.push('HTTP server', async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await closed;
  });
  // Before the server closes: open event streams would keep it from closing.
  opened.push('run event streams', () => runEvents.stop());
  // Zero until start-up is over: a start that fails stops at once whatever it began.
  let graceMs = 0;
  opened.push('local runs', () => executor.drain(graceMs));
  opened.push('remote hand-outs', () => remote.stop());
  dispatcher.start();
  opened.push('dispatcher', () => dispatcher.stop());
  if (config.schedulerEnabled) {
    opened.push('scheduler leadership', () => leadership.stop());
    await leadership.start();
    opened.push('scheduler', () => scheduler.stop());
    await scheduler.start();
  }
  const stopRetention = startRetention({
    db,
    logger,
    retentionDays: (name) => index.all().find((e) => e.name === name)?.result.dag?.histRetentionDays ?? config.histRetentionDays,
  });
  opened.push('retention', stopRetention);
  graceMs = config.shutdownGraceSec * 1000;
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const apiUrl = `http://${host}:${port}${apiMountPath(config)}`;
  logger.info('coordinator listening', { apiUrl, dagsDir: config.dagsDir, database: db.capabilities.name });
  return {
    apiUrl,
    index,
    db,
    ...(grpc !== undefined ? { grpcAddress: grpc.address } : {}),
    scheduler,
    apiKeys,
    close: async () => {
      await opened.close();
      logger.info('coordinator stopped');
    },
    abortLocalRuns: () => executor.stopAll('the coordinator was told to stop at once'),
  };
}
