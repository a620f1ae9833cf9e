import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { releaseLease, type Db } from '@trellis/store';
import { DagFiles } from '../definitions/dag-files.js';
import { BASE_CONFIG_NAME, DagIndex } from '../definitions/dag-index.js';
import { StoredFileCaches, type StoredKindCache } from '../stored-files/stored-kind-cache.js';
import { DirectoryMirror, type MirrorFiles } from '../stored-files/directory-mirror.js';
import { SingleFile } from '../stored-files/single-file.js';
import { DocFiles } from '../documents/doc-files.js';
import { DocumentStore } from '../documents/document-store.js';
import { SearchIndex } from '../search/search-index.js';
import { SyncService } from '../sync/sync-service.js';
import { AutoSync } from '../sync/auto-sync.js';
import { recordAudit } from '../auth/audit.js';
import { Dispatcher } from '../admission/dispatcher.js';
import { QueueLimits } from '../admission/placement.js';
import { RemotePollers } from '../admission/remote-pollers.js';
import { LocalExecutor, localWorkerId } from '../execution/local-executor.js';
import { ReportApplier } from '../execution/report-applier.js';
import { RunEnds } from '../runs/run-ends.js';
import { SpecCache } from '../execution/spec-cache.js';
import { RunService } from '../runs/run-service.js';
import { RunQueries } from '../runs/run-queries.js';
import { SubRuns } from '../runs/sub-runs.js';
import { RunEventHub } from '../runs/run-event-hub.js';
import { LogFollowers } from '../logs/log-followers.js';
import { LogFileImport } from '../logs/log-file-import.js';
import { RemoteWorkers } from '../workers/remote-workers.js';
import { WorkerRegistry } from '../workers/worker-registry.js';
import { Peers } from '../workers/peers.js';
import { workerHandlers, type WorkerHandlers } from '../grpc/worker-service.js';
import { ApiKeyService } from '../auth/api-keys.js';
import { WebhookService } from '../webhooks/webhook-service.js';
import { WorkspaceService } from '../profiles/workspace-service.js';
import { ProfileService } from '../profiles/profile-service.js';
import { openSecretKeyring, type SecretKeyring } from '../profiles/secret-keyring.js';
import { ResourceHistory } from '../metrics/resource-history.js';
import { ServiceMetrics } from '../metrics/service-metrics.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { SchedulerLeadership } from '../scheduler/leadership.js';
import { realClock, scaledClock, type SchedulerClock } from '../scheduler/clock.js';
import type { ServerConfig } from '../config/load.js';
import type { Logger } from '../logging/logger.js';

export const VERSION = '0.1.0';

/** Everything a coordinator is made of, built and wired; nothing started, nothing listening. */
export interface CoordinatorParts {
  config: ServerConfig;
  logger: Logger;
  db: Db;
  /** This coordinator's local executor's worker id. */
  localId: string;
  instanceId: string;
  startedAt: Date;
  /** DAG definitions, the base configuration and documents as the database has them. */
  storedFiles: StoredFileCaches;
  /** The directories that mirror them: DAGs, the base configuration file, documents. */
  mirrors: DirectoryMirror[];
  index: DagIndex;
  documents: DocumentStore;
  /** DAG specs and documents as search reads them, following the same change feeds. */
  search: SearchIndex;
  /** Repository sync of DAGs and documents, and its read-only gate on API writes. */
  sync: SyncService;
  autoSync: AutoSync;
  globalQueues: Map<string, number>;
  queueLimits: QueueLimits;
  registry: WorkerRegistry;
  peers: Peers;
  metrics: ServiceMetrics;
  executor: LocalExecutor;
  /** News of runs ending through this coordinator, for waits on them (start-sync, WaitRun, parents). */
  ends: RunEnds;
  remote: RemotePollers;
  dispatcher: Dispatcher;
  runs: RunService;
  queries: RunQueries;
  leadership: SchedulerLeadership;
  scheduler: Scheduler;
  runEvents: RunEventHub;
  /** Followers of run logs, woken when chunks are stored here or (NOTIFY) elsewhere. */
  logFollowers: LogFollowers;
  resources: ResourceHistory;
  apiKeys: ApiKeyService;
  webhooks: WebhookService;
  workspaces: WorkspaceService;
  /** Runtime profiles and the secret store; a run start asks it `mayUse` and `resolve`. */
  profiles: ProfileService;
  /** What the worker gRPC server answers, when it runs (grpcPort >= 0). */
  workerHandlers?: WorkerHandlers;
}

export interface AssemblyOptions {
  schedulerClock?: SchedulerClock;
  /** Awaited by a repository pull between its plan and its write (tests). */
  syncPullWindow?: () => Promise<void>;
}

/**
 * Builds the coordinator's parts in dependency order: admission needs the executor, the run
 * service needs both, and the executor's sub-DAG children go through the run service, which it
 * is given by an explicit attach once that exists. Constructors only wire; starting is the
 * lifecycle's (see coordinator-lifecycle.ts), except the API key service's flush timer, whose
 * stop the lifecycle registers first.
 */
export function assembleCoordinator(config: ServerConfig, logger: Logger, db: Db, options: AssemblyOptions = {}): CoordinatorParts {
  const localId = localWorkerId(config.coordinatorId ?? `${hostname()}:${config.port}`);
  const instanceId = randomUUID();
  const storedFiles = new StoredFileCaches(db, logger, instanceId);
  const index = new DagIndex(storedFiles.dag, storedFiles.base, logger);
  const globalQueues = new Map(config.queues.map((q) => [q.name, q.maxConcurrency]));
  const queueLimits = new QueueLimits(globalQueues, () => index.all().flatMap((e): Array<[string, number]> => (e.result.dag?.maxActiveRuns !== undefined ? [[e.name, e.result.dag.maxActiveRuns]] : [])));
  const queueLimit = (queueName: string): number => queueLimits.limitOf(queueName);
  const specOfDag = (name: string) => index.all().find((e) => e.name === name || e.fileName === name)?.text;
  const registry = new WorkerRegistry(db);
  const specs = new SpecCache(db);
  const peers = new Peers();
  const startedAt = new Date();
  const docFiles = config.docsDir !== '' ? new DocFiles(config.docsDir) : undefined;
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
  const logFollowers = new LogFollowers(db, logger);
  // Seals profile secrets, and the inputs of runs that carry secrets.
  const keyring = openSecretKeyring(config.secretKeys, db.capabilities, config.dataDir, logger);
  const profiles = new ProfileService(db, keyring);
  // The sync token is sealed with the same keyring; the clone under the data directory is a cache.
  const sync = new SyncService({ db, keyring, dags: storedFiles.dag, docs: storedFiles.doc, gitdir: join(config.dataDir, 'sync', 'repository.git'), logger, writeDags: config.writeDags, pullWindow: options.syncPullWindow });
  const ends = new RunEnds();
  const executor = new LocalExecutor({
    db,
    logFollowers,
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
    ends,
    profiles,
    sealer: keyring,
  });
  const remote = new RemotePollers({ db, logger, limits: queueLimits, release: (run) => releaseLease(db, run.id, run.attemptId) });
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
    hasPeers: peers.any,
    specOfDag,
    profiles,
    sealer: keyring,
    defaultProfile: config.defaultProfile,
    ends,
  });
  // Sub-DAG steps that name worker labels (and every local child) are queued through the run service.
  executor.attachChildRuns(runs);
  const clock = options.schedulerClock ?? (config.schedulerClockSpeed > 1 ? scaledClock(new Date(config.schedulerClockAnchor ?? Date.now()), config.schedulerClockSpeed) : realClock);
  return {
    config,
    logger,
    db,
    localId,
    instanceId,
    startedAt,
    storedFiles,
    mirrors: directoryMirrors(config, logger, db, storedFiles, docFiles),
    index,
    documents: new DocumentStore(storedFiles.doc, docFiles, {
      requireWritable: () => sync.requireWritable(),
      record: (actor, type, message, data) => recordAudit(db, actor, { type, message, data }),
    }),
    search: new SearchIndex(index, storedFiles.doc),
    sync,
    autoSync: new AutoSync(sync, logger),
    globalQueues,
    queueLimits,
    registry,
    peers,
    metrics,
    executor,
    ends,
    remote,
    dispatcher,
    runs,
    queries: new RunQueries({ db, runs, logFiles: new LogFileImport(db, logger) }),
    leadership,
    scheduler: new Scheduler({ db, logger, index, runs, clock, leadership, timezone: config.timezone, defaultProfile: config.defaultProfile }),
    runEvents: new RunEventHub(db, logger),
    logFollowers,
    resources: new ResourceHistory(config.dataDir, logger),
    apiKeys: new ApiKeyService({ db, logger }),
    webhooks: new WebhookService({
      db,
      runs,
      profiles,
      definition: async (fileName) => {
        // An exact read: a DAG changed through another coordinator a moment ago is the one started.
        const { entry } = await index.refresh(fileName);
        return entry !== undefined ? { text: entry.text, dag: entry.result.dag, errors: entry.result.errors } : undefined;
      },
    }),
    workspaces: new WorkspaceService(db),
    profiles,
    ...(grpcWanted ? { workerHandlers: remoteWorkerHandlers(config, logger, db, { registry, remote, specs, metrics, ends, dispatcher, runs, logFollowers, profiles, keyring }) } : {}),
  };
}

/** The DAGs directory, the base configuration file and the docs directory, where configured, each following its kind in the database. */
function directoryMirrors(config: ServerConfig, logger: Logger, db: Db, stored: StoredFileCaches, docFiles: DocFiles | undefined): DirectoryMirror[] {
  const mirror = (cache: StoredKindCache, files: MirrorFiles) => new DirectoryMirror(db, cache, files, logger, `directory ${files.root}`);
  return [
    ...(config.baseConfig !== undefined ? [mirror(stored.base, new SingleFile(config.baseConfig, BASE_CONFIG_NAME))] : []),
    mirror(stored.dag, new DagFiles(config.dagsDir)),
    ...(docFiles !== undefined ? [mirror(stored.doc, docFiles)] : []),
  ];
}

/** The worker gRPC service: hand-outs, reports (applied here), and sub-runs a worker starts. */
function remoteWorkerHandlers(
  config: ServerConfig,
  logger: Logger,
  db: Db,
  parts: { registry: WorkerRegistry; remote: RemotePollers; specs: SpecCache; metrics: ServiceMetrics; ends: RunEnds; dispatcher: Dispatcher; runs: RunService; logFollowers: LogFollowers; profiles: ProfileService; keyring: SecretKeyring },
): WorkerHandlers {
  // Cached attempts are trusted for half the heartbeat timeout after the worker's last heartbeat (see ReportApplier).
  const applier = new ReportApplier(db, parts.metrics, config.workerHeartbeatTimeoutSec * 500, parts.logFollowers, parts.ends, logger);
  const workers = new RemoteWorkers({
    db,
    logger,
    registry: parts.registry,
    pollers: parts.remote,
    applier,
    specs: parts.specs,
    dagsDir: config.dagsDir,
    observer: parts.metrics,
    profiles: parts.profiles,
    sealer: parts.keyring,
    wake: (reason) => parts.dispatcher.wake(reason),
  });
  return workerHandlers({ workers, subRuns: new SubRuns({ db, logger, runs: parts.runs, ends: parts.ends }) });
}
