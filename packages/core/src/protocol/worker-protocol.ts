// The worker <-> coordinator messages of protos/coordinator/v1/coordinator.proto as
// @grpc/proto-loader presents them (camelCase fields, int64 as numbers, bytes as Buffer).
// Shared types only: each side loads the .proto itself with PROTO_LOADER_OPTIONS.
import { fileURLToPath } from 'node:url';
import type { WorkerSelector } from '../model/dag.js';

/** The .proto file, found from this module in src/ or dist/ alike. */
export const PROTO_FILE = fileURLToPath(new URL('../../../../protos/coordinator/v1/coordinator.proto', import.meta.url));
export const PROTO_SERVICE = 'trellis.coordinator.v1.Coordinator';

export const PROTO_LOADER_OPTIONS = { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true } as const;

export interface TaskRef {
  dagName: string;
  dagRunId: string;
  attemptId: string;
}

export interface RegisterRequest {
  workerId: string;
  labels: Record<string, string>;
  pollers: number;
  hostname: string;
  version: string;
  /** Attempts this process holds (running or being acknowledged). */
  held: TaskRef[];
  /** `held` is filled in (false from a worker that predates it). */
  listsHeld: boolean;
}

export interface RegisterResponse {
  heartbeatIntervalMs: number;
  assigned: TaskRef[];
}

export interface PollRequest {
  workerId: string;
  pollerIndex: number;
  waitMs: number;
}

export interface Task {
  ref: TaskRef;
  rootDagRunName: string;
  rootDagRunId: string;
  parentDagRunName: string;
  parentDagRunId: string;
  specYaml: string;
  fileName: string;
  paramsJson: string;
  env: Record<string, string>;
  secrets: Record<string, string>;
  queuedAt: string;
  /** Text of the DAG's relative dotenv files found beside its file on the coordinator, by entry. */
  dotenvFiles: Record<string, string>;
  /** A parent's secrets this sub-run's params or env carry: masked wherever the run shows them. */
  maskValues: string[];
}

export interface PollResponse {
  task?: Task | null;
}

export interface AckTaskRequest {
  workerId: string;
  ref: TaskRef;
}

export interface AckTaskResponse {
  accepted: boolean;
  reason: string;
}

export interface RunningTask {
  ref: TaskRef;
  startedAt: string;
  rootDagRunName: string;
  rootDagRunId: string;
  parentDagRunName: string;
  parentDagRunId: string;
}

export interface HeartbeatRequest {
  workerId: string;
  running: RunningTask[];
  pollersTotal: number;
  pollersBusy: number;
  /** Attempts being acknowledged: held, not running yet. */
  claiming: TaskRef[];
}

export interface RunCommandMessage {
  ref: TaskRef;
  kind: string;
  stepName: string;
  inputs: Record<string, string>;
  reason: string;
}

export interface HeartbeatResponse {
  cancel: TaskRef[];
  reregister: boolean;
  commands: RunCommandMessage[];
}

export interface LogChunkMessage {
  stream: string;
  offset: number;
  data: Buffer;
}

export interface ReportEvent {
  seq: number;
  statusJson?: string;
  log?: LogChunkMessage;
  outputsJson?: string;
  /** Which of the oneof fields is set (proto-loader's `oneofs: true`). */
  body?: 'statusJson' | 'log' | 'outputsJson';
}

export interface ReportRequest {
  workerId: string;
  ref: TaskRef;
  events: ReportEvent[];
}

export interface ReportResponse {
  appliedSeq: number;
  stale: boolean;
}

export interface StartSubRunRequest {
  workerId: string;
  parent: TaskRef;
  rootDagRunName: string;
  rootDagRunId: string;
  dagName: string;
  specYaml: string;
  paramsJson: string;
  dagRunId: string;
  workerSelector: Record<string, string>;
  runLocal: boolean;
  /** Run-level variables for the child (ITEM of a `parallel` item); not secrets. */
  env: Record<string, string>;
  /** The parent's secret values that paramsJson or env carry. */
  maskValues: string[];
}

/** The parent side of a StartSubRun: who asks, for which attempt, and its definition's YAML. */
export interface SubRunParent {
  workerId: string;
  ref: TaskRef;
  rootDagRunName: string;
  rootDagRunId: string;
  specYaml: string;
}

/**
 * The StartSubRun message for one sub-DAG step's child, as the engine asks for it: a child from
 * the parent's own file travels with the parent's YAML; `local` and label selectors map to
 * run_local and worker_selector.
 */
export function startSubRunRequest(
  parent: SubRunParent,
  child: { dagName: string; dagRunId: string; params: string; env: Record<string, string>; maskValues: string[]; workerSelector?: WorkerSelector | undefined; fromParentFile: boolean },
): StartSubRunRequest {
  const selector = child.workerSelector;
  return {
    workerId: parent.workerId,
    parent: parent.ref,
    rootDagRunName: parent.rootDagRunName,
    rootDagRunId: parent.rootDagRunId,
    dagName: child.dagName,
    specYaml: child.fromParentFile ? parent.specYaml : '',
    paramsJson: child.params,
    dagRunId: child.dagRunId,
    workerSelector: selector?.kind === 'labels' ? selector.labels : {},
    runLocal: selector?.kind === 'local',
    env: child.env,
    maskValues: child.maskValues,
  };
}

export interface StartSubRunResponse {
  dagRunId: string;
}

export interface WaitRunRequest {
  dagName: string;
  dagRunId: string;
  waitMs: number;
}

export interface WaitRunResponse {
  finished: boolean;
  status: number;
  outputsJson: string;
  error: string;
}

export interface StopSubRunRequest {
  workerId: string;
  parent: TaskRef;
  dagName: string;
  dagRunId: string;
}

export interface StopSubRunResponse {
  stopped: boolean;
}

/** One call's request or answer on the Session stream. */
export interface SessionFrame {
  id: number;
  method: string;
  payload: Buffer;
  code: number;
  message: string;
  cancel: boolean;
}

/** Metadata key of the shared worker token (`Bearer <token>`). */
export const WORKER_AUTH_METADATA = 'authorization';
