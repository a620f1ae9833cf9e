import { hostname } from 'node:os';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { isValidWorkerId } from '@trellis/core/protocol';

export interface WorkerConfig {
  /**
   * host:port of each coordinator's gRPC server, in the order tried: the worker talks to one at
   * a time and moves to the next when that one is unreachable (coordinators sharing a database).
   */
  coordinators: string[];
  id: string;
  labels: Record<string, string>;
  /** Concurrent runs (one poller each). */
  pollers: number;
  /** Per-attempt log and work directories live here while the run goes on. */
  workDir: string;
  token?: string;
  /** TLS: the CA that signed the coordinator's certificate, and an optional client certificate. */
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  /** On SIGTERM, running tasks get this long to finish before they are stopped. */
  shutdownGraceSec: number;
  logLevel: string;
}

export class WorkerConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid worker configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'WorkerConfigError';
  }
}

const LABEL_KEY = /^[A-Za-z0-9_.\/-]{1,63}$/;

/** `k=v,k2=v2` into a map; every problem is reported. */
export function parseLabels(text: string, problems: string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of text.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const at = pair.indexOf('=');
    const key = at < 0 ? pair : pair.slice(0, at);
    if (at < 0 || !LABEL_KEY.test(key)) problems.push(`label "${pair}" must look like key=value (key: letters, digits, _ . / -)`);
    else labels[key] = pair.slice(at + 1);
  }
  return labels;
}

/** `host:port[,host:port...]`: every address is checked, and each may appear once. */
function parseCoordinators(text: string | undefined, problems: string[]): string[] {
  if (text === undefined) {
    problems.push('--coordinator HOST:PORT[,HOST:PORT...] is required (or SVC_WORKER_COORDINATOR)');
    return [];
  }
  const addresses = text.split(',').map((a) => a.trim()).filter((a) => a !== '');
  if (addresses.length === 0) problems.push('--coordinator needs at least one HOST:PORT');
  for (const address of addresses) if (!/^[^\s,]+:\d+$/.test(address)) problems.push(`--coordinator must be HOST:PORT (several separated by commas), got "${address}"`);
  if (new Set(addresses).size !== addresses.length) problems.push(`--coordinator lists an address twice: "${text}"`);
  return addresses;
}

export interface RawWorkerConfig {
  coordinator?: string;
  id?: string;
  labels?: string;
  pollers?: string;
  workDir?: string;
  token?: string;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  shutdownGraceSec?: string;
  logLevel?: string;
}

function positiveInt(name: string, text: string | undefined, fallback: number, problems: string[]): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    problems.push(`${name} must be a positive integer, got "${text}"`);
    return fallback;
  }
  return Number(text);
}

/** Flags win over SVC_WORKER_* variables; everything is checked once, here. */
export function loadWorkerConfig(flags: RawWorkerConfig, env: NodeJS.ProcessEnv): WorkerConfig {
  const problems: string[] = [];
  const pick = (flag: string | undefined, name: string): string | undefined => flag ?? (env[name] !== '' ? env[name] : undefined);
  const coordinator = pick(flags.coordinator, 'SVC_WORKER_COORDINATOR');
  const coordinators = parseCoordinators(coordinator, problems);
  const id = pick(flags.id, 'SVC_WORKER_ID') ?? `${hostname()}-${process.pid}`;
  if (!isValidWorkerId(id)) problems.push(`--id must be 1-128 letters, digits or _ . : @ -, got "${id}"`);
  const labels = parseLabels(pick(flags.labels, 'SVC_WORKER_LABELS') ?? '', problems);
  const tlsCert = pick(flags.tlsCert, 'SVC_WORKER_TLS_CERT');
  const tlsKey = pick(flags.tlsKey, 'SVC_WORKER_TLS_KEY');
  if ((tlsCert === undefined) !== (tlsKey === undefined)) problems.push('--tls-cert and --tls-key go together');
  const token = pick(flags.token, 'SVC_WORKER_TOKEN');
  const tlsCa = pick(flags.tlsCa, 'SVC_WORKER_TLS_CA');
  const config: WorkerConfig = {
    coordinators,
    id,
    labels,
    pollers: positiveInt('--pollers', pick(flags.pollers, 'SVC_WORKER_POLLERS'), 4, problems),
    workDir: pick(flags.workDir, 'SVC_WORKER_WORK_DIR') ?? join(tmpdir(), 'trellis-worker', id),
    shutdownGraceSec: positiveInt('--shutdown-grace-sec', pick(flags.shutdownGraceSec, 'SVC_WORKER_SHUTDOWN_GRACE_SEC'), 60, problems),
    logLevel: pick(flags.logLevel, 'SVC_WORKER_LOG_LEVEL') ?? 'info',
    ...(token !== undefined ? { token } : {}),
    ...(tlsCa !== undefined ? { tlsCa } : {}),
    ...(tlsCert !== undefined && tlsKey !== undefined ? { tlsCert, tlsKey } : {}),
  };
  if (!['error', 'warn', 'info', 'debug'].includes(config.logLevel)) problems.push(`--log-level must be error, warn, info or debug`);
  if (problems.length > 0) throw new WorkerConfigError(problems);
  return config;
}
