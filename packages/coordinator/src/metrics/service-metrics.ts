import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { runStatusLabel, type RunStatus, toError } from '@trellis/core';
import { finishedRunsByStatus, queueStats, type Db, type QueueStats, type RunRecord } from '@trellis/store';
import type { WorkerRegistry, WorkerView } from '../workers/worker-registry.js';
import type { Logger } from '../logging/logger.js';

/** Database aggregates are refreshed at most this often, however many scrapers there are. */
const AGGREGATE_TTL_MS = 5000;
const HEALTH_STATES = ['healthy', 'warning', 'unhealthy'] as const;
/**
 * prom-client's sums of its per-type gauges (`nodejs_active_handles{type}` ...): gauges named
 * like counters, which `promtool check metrics` flags, and nothing the per-type series lack.
 */
const MISNAMED_DEFAULT_METRICS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

export interface MetricsDeps {
  db: Db;
  logger: Logger;
  version: string;
  startedAt: Date;
  registry: WorkerRegistry;
  dagCount: () => number;
  /** This coordinator leads the scheduler: it alone exports the database-wide gauges. */
  schedulerRunning: () => boolean;
}

interface Aggregates {
  queues: QueueStats[];
  finished: Map<number, number>;
  workers: WorkerView[];
  at: number;
}

/**
 * The contract's svc_* metrics plus queue, dispatch, run-duration and HTTP metrics, in one
 * private registry. Gauges read aggregates refreshed (in the background, after the first
 * scrape) at most every five seconds by three
 * indexed queries over active and recent runs only, so a scrape costs the same with a hundred
 * runs stored or a hundred thousand.
 *
 * Gauges of the shared database (runs, queues, workers) are exported only by the coordinator
 * that leads the scheduler: with several coordinators each would report the same totals, and
 * a dashboard's sum() would count them once per coordinator. The others export their own
 * process, HTTP, dispatch and run-duration metrics, and query nothing for a scrape.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private aggregates: Aggregates | undefined;
  private refreshing: Promise<void> | undefined;
  readonly dispatchLatency: Histogram;
  readonly runDuration: Histogram<'dag'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly runsFinished: Counter<'status'>;
  private readonly logBytesRefusedTotal: Counter;

  constructor(private readonly deps: MetricsDeps) {
    collectDefaultMetrics({ register: this.registry });
    for (const name of MISNAMED_DEFAULT_METRICS) this.registry.removeSingleMetric(name);
    const registers = [this.registry];
    this.dispatchLatency = new Histogram({
      name: 'svc_dispatch_latency_seconds',
      help: 'From queued to started on an executor (local, or acknowledged by a worker)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.runDuration = new Histogram({ name: 'svc_dag_run_duration_seconds', help: 'Run duration by DAG, from start to finish', labelNames: ['dag'], buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14400], registers });
    this.httpDuration = new Histogram({ name: 'svc_http_request_duration_seconds', help: 'REST API request duration by route', labelNames: ['method', 'route', 'status'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5], registers });
    this.runsFinished = new Counter({ name: 'svc_dag_runs_finished_total', help: 'Runs this coordinator saw finish, by status', labelNames: ['status'], registers });
    this.logBytesRefusedTotal = new Counter({ name: 'svc_log_bytes_refused_total', help: "Bytes of workers' run logs refused as starting past the stored end of their log (lost: a stored log never holds a hole)", registers });
    this.defineGauges(registers);
  }

  /** A run started: dispatch latency. */
  started(run: RunRecord, at = new Date()): void {
    if (run.queuedAt !== null) this.dispatchLatency.observe(Math.max(0, (at.getTime() - run.queuedAt.getTime()) / 1000));
  }

  /** A run finished: its duration, by DAG. */
  finished(dagName: string, status: RunStatus, startedAt: Date | null, finishedAt = new Date()): void {
    this.runsFinished.inc({ status: runStatusLabel(status) });
    if (startedAt !== null) this.runDuration.observe({ dag: dagName }, Math.max(0, (finishedAt.getTime() - startedAt.getTime()) / 1000));
  }

  logBytesRefused(bytes: number): void {
    this.logBytesRefusedTotal.inc(bytes);
  }

  /** The text a scrape returns. */
  async scrape(): Promise<string> {
    if (this.deps.schedulerRunning()) await this.ensureAggregates();
    return this.registry.metrics();
  }

  /**
   * Only the first scrape waits for the database; later ones are answered from the aggregates
   * held while stale ones are refreshed behind them, so no scrape waits for the queries.
   */
  private async ensureAggregates(): Promise<void> {
    const stale = this.aggregates === undefined || Date.now() - this.aggregates.at > AGGREGATE_TTL_MS;
    if (!stale) return;
    this.refreshing ??= this.refresh().finally(() => {
      this.refreshing = undefined;
    });
    if (this.aggregates === undefined) await this.refreshing;
  }

  private async refresh(): Promise<void> {
    try {
      const [queues, finished, workers] = await Promise.all([queueStats(this.deps.db), finishedRunsByStatus(this.deps.db), this.deps.registry.list()]);
      this.aggregates = { queues, finished, workers, at: Date.now() };
    } catch (error) {
      this.deps.logger.warn('metrics refresh failed; serving the previous values', { error: toError(error) });
    }
  }

  private gauge(name: string, help: string, labelNames: string[], registers: Registry[], collect: (g: Gauge) => void): void {
    new Gauge({ name, help, labelNames, registers, collect(this: Gauge) {
      this.reset();
      collect(this);
    } });
  }

  /** A gauge of the shared database: samples only from the scheduler leader (see the class comment). */
  private databaseGauge(name: string, help: string, labelNames: string[], registers: Registry[], collect: (g: Gauge) => void): void {
    this.gauge(name, `${help} (exported by the scheduler leader only)`, labelNames, registers, (g) => {
      if (this.deps.schedulerRunning()) collect(g);
      // An unlabelled gauge reads 0 after a reset: no sample at all is the truth here.
      else if (labelNames.length === 0) g.remove();
    });
  }

  private defineGauges(registers: Registry[]): void {
    const a = () => this.aggregates;
    this.gauge('svc_info', 'Service version', ['version'], registers, (g) => g.set({ version: this.deps.version }, 1));
    this.gauge('svc_uptime_seconds', 'Seconds since this coordinator started', [], registers, (g) => g.set((Date.now() - this.deps.startedAt.getTime()) / 1000));
    this.gauge('svc_scheduler_running', '1 while this coordinator leads the scheduler', [], registers, (g) => g.set(this.deps.schedulerRunning() ? 1 : 0));
    this.gauge('svc_dags_total', 'DAG definitions indexed', [], registers, (g) => g.set(this.deps.dagCount()));
    this.databaseGauge('svc_dag_runs_currently_running', 'Runs running or waiting', [], registers, (g) => g.set(sum(a()?.queues, (q) => q.running)));
    this.databaseGauge('svc_dag_runs_queued_total', 'Runs waiting in queues', [], registers, (g) => g.set(sum(a()?.queues, (q) => q.queued)));
    this.databaseGauge('svc_dag_runs_total', 'Runs finished in the last 24 hours, by status', ['status'], registers, (g) => {
      for (const [status, n] of a()?.finished ?? []) g.set({ status: runStatusLabel(status as RunStatus) }, n);
    });
    this.databaseGauge('svc_queue_depth', 'Queued runs per queue', ['queue'], registers, (g) => {
      for (const q of a()?.queues ?? []) g.set({ queue: q.queue }, q.queued);
    });
    this.databaseGauge('svc_queue_running', 'Running runs per queue', ['queue'], registers, (g) => {
      for (const q of a()?.queues ?? []) g.set({ queue: q.queue }, q.running);
    });
    this.databaseGauge('svc_queue_oldest_wait_seconds', 'How long the oldest queued run of each queue has waited', ['queue'], registers, (g) => {
      for (const q of a()?.queues ?? []) g.set({ queue: q.queue }, q.oldestQueuedAt === null ? 0 : Math.max(0, (Date.now() - q.oldestQueuedAt.getTime()) / 1000));
    });
    this.defineWorkerGauges(registers, a);
  }

  private defineWorkerGauges(registers: Registry[], a: () => Aggregates | undefined): void {
    const each = (fn: (g: Gauge, w: WorkerView) => void) => (g: Gauge) => {
      for (const w of a()?.workers ?? []) fn(g, w);
    };
    this.databaseGauge('svc_workers_registered', 'Workers registered', [], registers, (g) => g.set(a()?.workers.length ?? 0));
    this.databaseGauge('svc_worker_info', 'A registered worker', ['worker_id', 'hostname', 'labels'], registers, each((g, w) => g.set({ worker_id: w.id, hostname: w.hostname, labels: labelText(w.labels) }, 1)));
    this.databaseGauge('svc_worker_heartbeat_timestamp_seconds', 'Unix time of the worker\'s last heartbeat', ['worker_id'], registers, each((g, w) => g.set({ worker_id: w.id }, w.lastHeartbeat.getTime() / 1000)));
    this.databaseGauge('svc_worker_health_status', '1 for the worker\'s current health (healthy < 5 s, warning 5-15 s, unhealthy beyond)', ['worker_id', 'status'], registers, each((g, w) => {
      for (const state of HEALTH_STATES) g.set({ worker_id: w.id, status: state }, w.health === state ? 1 : 0);
    }));
    this.databaseGauge('svc_worker_pollers', 'Pollers per worker, total and busy', ['worker_id', 'state'], registers, each((g, w) => {
      g.set({ worker_id: w.id, state: 'total' }, w.pollers);
      g.set({ worker_id: w.id, state: 'busy' }, w.pollersBusy);
    }));
    this.databaseGauge('svc_worker_running_tasks', 'Runs a worker reports running', ['worker_id'], registers, each((g, w) => g.set({ worker_id: w.id }, w.running.length)));
    this.databaseGauge('svc_worker_oldest_running_task_age_seconds', 'Age of the oldest run a worker runs', ['worker_id'], registers, each((g, w) => {
      const oldest = Math.min(...w.running.map((t) => Date.parse(t.startedAt)).filter((t) => !Number.isNaN(t)));
      g.set({ worker_id: w.id }, Number.isFinite(oldest) ? Math.max(0, (Date.now() - oldest) / 1000) : 0);
    }));
  }
}

function sum<T>(items: T[] | undefined, value: (item: T) => number): number {
  return (items ?? []).reduce((total, item) => total + value(item), 0);
}

function labelText(labels: Record<string, string>): string {
  return Object.entries(labels).map(([k, v]) => `${k}=${v}`).sort().join(',');
}
