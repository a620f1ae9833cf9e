import type { Server } from 'node:http';
import { answerClientError } from '../http/client-errors.js';
import { DISPATCH_CHANNEL, failInterruptedRuns, openDatabase, recordEvent, type Db } from '@trellis/store';
import { toError } from '@trellis/core';
import { createHttpApp } from '../http/app.js';
import { apiRoutes } from '../http/api-routes.js';
import { startGrpcServer, type GrpcServer } from '../grpc/server.js';
import { startWorkerMonitor } from '../workers/worker-monitor.js';
import { startRetention } from '../runs/retention.js';
import { openAccessControl, type AccessControl } from '../auth/access-service.js';
import { isLoopbackHost } from '../auth/exposure.js';
import type { ServerConfig } from '../config/load.js';
import type { Logger } from '../logging/logger.js';
import { ShutdownStack } from './shutdown-stack.js';
import { VERSION, assembleCoordinator, type AssemblyOptions, type CoordinatorParts } from './assembly.js';

/** Local runs the previous process was running when it died cannot be resumed: they are failed, with a reason. */
const INTERRUPTED = 'the coordinator stopped while this run was running';

export interface LifecycleOptions extends AssemblyOptions {
  watch?: boolean;
  /** An already-open database (tests); default: opened from the configuration. */
  db?: Db;
  /** Check every JSON answer against its route's declared response schema (tests). */
  checkResponses?: boolean;
}

export interface Started {
  parts: CoordinatorParts;
  server: Server;
  grpc?: GrpcServer;
}

const HTTP_KEEP_ALIVE_MS = 65_000;

/** Why a listener could not open, naming the address; "address already in use" rather than errno text. */
function listenError(what: string, host: string, port: number, error: Error): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code === 'EADDRINUSE' ? 'address already in use' : code === 'EADDRNOTAVAIL' ? 'address not available on this host' : error.message;
  return new Error(`cannot listen for ${what} on ${host.includes(':') ? `[${host}]` : host}:${port}: ${reason}`, { cause: error });
}

async function listenHttp(app: ReturnType<typeof createHttpApp>, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const listening = app.listen(port, host);
    // Node closes an idle keep-alive connection after 5 s, which races a client (or a load
    // balancer idling at 60 s) that reuses it at that moment: the request fails with a reset.
    // Idle connections outlive common balancer timeouts instead; shutdown closes them at once.
    listening.keepAliveTimeout = HTTP_KEEP_ALIVE_MS;
    listening.headersTimeout = HTTP_KEEP_ALIVE_MS + 1000;
    listening.on('clientError', answerClientError);
    listening.once('listening', () => resolve(listening));
    listening.once('error', (error) => reject(listenError('HTTP', host, port, error)));
  });
}

async function openConfiguredDatabase(config: ServerConfig, logger: Logger): Promise<Db> {
  try {
    return await openDatabase({
      ...(config.databaseUrl !== undefined ? { databaseUrl: config.databaseUrl } : { dataDir: config.dataDir }),
      onBackgroundError: (error) => logger.error('database error', { error }),
    });
  } catch (error) {
    const where = config.databaseUrl !== undefined ? 'the PostgreSQL database' : `the embedded database under ${config.dataDir}`;
    throw new Error(`cannot open ${where}: ${toError(error).message}`, { cause: error });
  }
}

/**
 * A coordinator's start order and the shutdown stack that undoes it: database, DAG index, the
 * worker gRPC server and monitor, the API, then admission, the scheduler and retention. Each
 * step registers how to close what it opened, so a start that fails half-way closes exactly
 * that, and a shutdown stops taking work first, drains local runs while the API still answers,
 * and closes the database last.
 */
export class CoordinatorLifecycle {
  private readonly opened: ShutdownStack;
  private executor: CoordinatorParts['executor'] | undefined;
  /** Zero until start-up is over: a start that fails stops local runs at once. */
  private graceMs = 0;

  constructor(
    private readonly config: ServerConfig,
    private readonly logger: Logger,
  ) {
    this.opened = new ShutdownStack(logger);
  }

  /** Opens and starts everything in order; a start that fails closes whatever it had opened before it rethrows. */
  async start(options: LifecycleOptions): Promise<Started> {
    try {
      return await this.startSteps(options);
    } catch (error) {
      await this.opened.close();
      throw error;
    }
  }

  /** Stops taking work, lets local runs finish within the grace, then closes the rest; later calls wait for the same close. */
  close(): Promise<void> {
    return this.opened.close();
  }

  /** Cuts a shutdown's grace short: local runs are stopped now. */
  abortLocalRuns(): void {
    this.executor?.stopAll('the coordinator was told to stop at once');
  }

  private async startSteps(options: LifecycleOptions): Promise<Started> {
    const { config, logger } = this;
    const db = options.db ?? (await openConfiguredDatabase(config, logger));
    if (options.db === undefined) this.opened.push('database', () => db.close());
    const parts = assembleCoordinator(config, logger, db, options);
    this.executor = parts.executor;
    // The flush timer runs from construction: its stop comes before anything else can fail.
    this.opened.push('API key use times', () => parts.apiKeys.stop());
    const interrupted = await failInterruptedRuns(db, parts.localId, INTERRUPTED);
    if (interrupted.failed.length > 0) logger.warn('failed runs cut off by the previous shutdown', { count: interrupted.failed.length, childrenStopped: interrupted.childrenStopped });
    await this.startIndex(parts, options.watch ?? true);
    const grpc = await this.startGrpc(parts);
    await this.startWorkerSide(parts);
    parts.resources.start();
    this.opened.push('resource history', () => parts.resources.stop());
    const access = await openAccessControl(config.auth, db, (token) => parts.apiKeys.authenticateApiKey(token));
    const server = await this.startHttp(parts, access, options.checkResponses ?? false);
    this.startAdmission(parts);
    await this.startScheduler(parts);
    // After the index and the API: a start-up pull writes definitions every part then sees.
    this.opened.push('auto-sync', () => parts.autoSync.stop());
    await parts.autoSync.start();
    const stopRetention = startRetention({
      db,
      logger,
      retentionDays: (name) => parts.index.all().find((e) => e.name === name)?.result.dag?.histRetentionDays ?? config.histRetentionDays,
    });
    this.opened.push('retention', stopRetention);
    this.graceMs = config.shutdownGraceSec * 1000;
    return { parts, server, ...(grpc !== undefined ? { grpc } : {}) };
  }

  /**
   * Loads the stored files, settles each mirrored directory with the database (importing what
   * changed on disk), then indexes the DAGs; only then listens to changes, so the initial load
   * records no events.
   */
  private async startIndex({ db, index, search, queueLimits, logger, storedFiles, mirrors, instanceId }: CoordinatorParts, watch: boolean): Promise<void> {
    this.opened.push('stored file notifications', () => storedFiles.stop());
    await storedFiles.start();
    for (const mirror of mirrors) {
      this.opened.push('mirrored directory', () => mirror.stop());
      await mirror.start({ watch });
    }
    index.start();
    search.start();
    index.onChange((fileName, entry, origin) => {
      // Every coordinator sees the change; the one that wrote it records it in the shared event log.
      if (origin !== instanceId) return;
      const event = { kind: 'dag', type: entry === undefined ? 'dag.definition.deleted' : 'dag.definition.changed', dagName: entry?.name ?? fileName, message: `definition ${fileName} ${entry === undefined ? 'removed' : 'changed'}`, data: { fileName } };
      recordEvent(db, event).catch((error: unknown) => logger.warn('could not record a definition event', { fileName, error: toError(error) }));
    });
    index.onChange(() => queueLimits.invalidate());
  }

  private async startGrpc({ workerHandlers, logger }: CoordinatorParts): Promise<GrpcServer | undefined> {
    if (workerHandlers === undefined) return undefined;
    const config = this.config;
    const security = { ...(config.workerToken !== undefined ? { workerToken: config.workerToken } : {}), ...(config.grpcTlsCert !== undefined ? { tlsCert: config.grpcTlsCert } : {}), ...(config.grpcTlsKey !== undefined ? { tlsKey: config.grpcTlsKey } : {}), ...(config.grpcTlsClientCa !== undefined ? { tlsClientCa: config.grpcTlsClientCa } : {}) };
    const grpc = await startGrpcServer(config.grpcHost, config.grpcPort, security, workerHandlers, logger);
    this.opened.push('worker gRPC server', () => grpc.close());
    logger.info('worker gRPC server listening', { address: grpc.address, tls: security.tlsCert !== undefined, token: security.workerToken !== undefined });
    if (security.tlsCert === undefined && !isLoopbackHost(config.grpcHost)) {
      // Tasks carry runtime-profile secrets: without TLS they cross the network readable.
      logger.warn('the worker gRPC server listens beyond loopback without TLS: tasks, and the profile secrets in them, cross the network unencrypted; set grpcTlsCert and grpcTlsKey unless the network is private', { address: grpc.address });
    }
    return grpc;
  }

  /** The worker monitor (it heartbeats for the local executor, so it runs until local runs are drained) and dispatch notifications. */
  private async startWorkerSide({ db, logger, localId, peers, registry, dispatcher, instanceId }: CoordinatorParts): Promise<void> {
    const config = this.config;
    const stopMonitor = await startWorkerMonitor({ db, logger, localWorkerId: localId, onPeers: peers.update, onPruned: (ids) => ids.forEach((id) => registry.forget(id)), ackTimeoutSec: config.workerAckTimeoutSec, heartbeatTimeoutSec: config.workerHeartbeatTimeoutSec, onChange: () => dispatcher.wake() });
    this.opened.push('worker monitor', stopMonitor);
    if (db.listen === undefined) return;
    const unlisten = await db.listen(DISPATCH_CHANNEL, (sender) => sender !== instanceId && dispatcher.wake(), (error) => logger.warn('dispatch notifications interrupted; reconnecting', { error }));
    this.opened.push('dispatch notifications', unlisten);
  }

  private async startHttp(parts: CoordinatorParts, access: AccessControl, checkResponses: boolean): Promise<Server> {
    const { config, logger, metrics } = parts;
    const app = createHttpApp({
      routes: apiRoutes(parts, access),
      logger,
      basePath: config.basePath,
      apiBasePath: config.apiBasePath,
      uiDir: config.uiDir,
      version: VERSION,
      checkResponses,
      accessLog: config.accessLog,
      browser: { allowedHosts: [...config.allowedHosts, config.host], allowedOrigins: config.allowedOrigins },
      authenticate: (authorization, address) => access.authenticator.authenticate(authorization, address),
      observe: (method, route, status, seconds) => metrics.httpDuration.observe({ method, route, status: String(status) }, seconds),
    });
    const server = await listenHttp(app, config.host, config.port);
    // The API keeps answering while local runs drain (their status, stop requests); then it closes.
    this.opened.push('HTTP server', async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
    });
    // Before the server closes: open event streams would keep it from closing.
    this.opened.push('run event streams', () => parts.runEvents.stop());
    this.opened.push('log streams', () => parts.logFollowers.stop());
    return server;
  }

  /** Admission last among the run paths: shut down first, so local runs drain with nothing new admitted. */
  private startAdmission({ executor, remote, dispatcher }: CoordinatorParts): void {
    this.opened.push('local runs', () => executor.drain(this.graceMs));
    this.opened.push('remote hand-outs', () => remote.stop());
    dispatcher.start();
    this.opened.push('dispatcher', () => dispatcher.stop());
  }

  private async startScheduler({ leadership, scheduler }: CoordinatorParts): Promise<void> {
    if (!this.config.schedulerEnabled) return;
    this.opened.push('scheduler leadership', () => leadership.stop());
    await leadership.start();
    this.opened.push('scheduler', () => scheduler.stop());
    await scheduler.start();
  }
}
