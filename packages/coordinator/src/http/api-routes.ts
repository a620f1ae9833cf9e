import type { AnyRoute } from './routes.js';
import { dagRoutes } from '../api/dags.routes.js';
import { runRoutes } from '../api/runs.routes.js';
import { systemRoutes } from '../api/system.routes.js';
import { workerRoutes } from '../api/workers.routes.js';
import { queueRoutes } from '../api/queues.routes.js';
import { schedulerRoutes } from '../api/scheduler.routes.js';
import { metricsRoutes } from '../api/metrics.routes.js';
import { resourceRoutes } from '../api/resources.routes.js';
import { eventRoutes } from '../api/events.routes.js';
import { streamRoutes } from '../api/streams.routes.js';
import { LogFollow } from '../logs/log-follow.js';
import { apiKeyRoutes } from '../api/api-keys.routes.js';
import { webhookRoutes } from '../api/webhooks.routes.js';
import { authRoutes } from '../api/auth.routes.js';
import { userRoutes } from '../api/users.routes.js';
import { oidcRoutes } from '../api/oidc.routes.js';
import { workspaceRoutes } from '../api/workspaces.routes.js';
import { profileRoutes } from '../api/profiles.routes.js';
import { docRoutes } from '../api/docs.routes.js';
import { searchRoutes } from '../api/search.routes.js';
import { syncRoutes } from '../api/sync.routes.js';
import { SearchQueries } from '../search/search-queries.js';
import { DagCommands } from '../definitions/dag-commands.js';
import { DagQueries } from '../definitions/dag-queries.js';
import { RunCommands } from '../runs/run-commands.js';
import { QueueQueries } from '../runs/queue-queries.js';
import { EventLog } from '../runs/event-log.js';
import { DatabaseProbe } from '../health/database-probe.js';
import { ServiceHealth } from '../health/service-health.js';
import { ConnectedWorkers } from '../workers/connected-workers.js';
import { SchedulerPause } from '../scheduler/pause.js';
import type { AccessControl } from '../auth/access-service.js';
import { VERSION, type CoordinatorParts } from '../lifecycle/assembly.js';

/** The REST API: each group of routes over the services it calls. */
export function apiRoutes(parts: CoordinatorParts, access: AccessControl): AnyRoute[] {
  const { config, db, index, runs, queries, scheduler } = parts;
  return [
    ...systemRoutes(new ServiceHealth({ version: VERSION, startedAt: parts.startedAt, database: new DatabaseProbe(db) })),
    ...authRoutes(access.users),
    ...userRoutes(access.users),
    ...oidcRoutes(access.oidc, config.auth.oidc?.redirectUrl),
    ...metricsRoutes(parts.metrics, config.metrics),
    ...resourceRoutes(parts.resources),
    ...eventRoutes(new EventLog(db)),
    ...streamRoutes(parts.runEvents, new LogFollow({ db, queries, followers: parts.logFollowers, logger: parts.logger })),
    ...dagRoutes({ queries: new DagQueries({ index, runs, runQueries: queries, schedule: scheduler }), commands: new DagCommands({ db, dags: parts.storedFiles.dag, index, runs, schedule: scheduler, requireWritable: () => parts.sync.requireWritable() }) }),
    ...schedulerRoutes({ pause: new SchedulerPause(db) }),
    ...runRoutes({ commands: new RunCommands({ db, index, runs, queries, executor: parts.executor, ends: parts.ends, profiles: parts.profiles }), queries }),
    ...workerRoutes(new ConnectedWorkers(parts.registry, parts.workerHandlers !== undefined)),
    ...queueRoutes(new QueueQueries({ db, globalQueues: parts.globalQueues, isDag: (name) => index.all().some((e) => e.name === name) })),
    ...apiKeyRoutes(parts.apiKeys),
    ...webhookRoutes(parts.webhooks),
    ...workspaceRoutes(parts.workspaces),
    ...profileRoutes(parts.profiles),
    ...docRoutes(parts.documents),
    ...searchRoutes(new SearchQueries(parts.search, index)),
    ...syncRoutes(parts.sync, parts.autoSync),
  ];
}
