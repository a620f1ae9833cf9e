// How each side loads protos/coordinator/v1/coordinator.proto, and the messages built the same
// way on both (the message types themselves are generated: see messages.ts). Each side loads
// the .proto itself with PROTO_LOADER_OPTIONS (camelCase fields, int64 as numbers, bytes as Buffer).
import { fileURLToPath } from 'node:url';
import type { WorkerSelector } from '../model/dag.js';
import type { RunLineage } from '../model/run-identity.js';
import type { StartSubRunRequest, TaskRef } from './messages.js';

/** The .proto file, found from this module in src/ or dist/ alike. */
export const PROTO_FILE = fileURLToPath(new URL('../../../../protos/coordinator/v1/coordinator.proto', import.meta.url));
export const PROTO_SERVICE = 'trellis.coordinator.v1.Coordinator';

export const PROTO_LOADER_OPTIONS = { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true } as const;

/** The parent side of a StartSubRun: who asks, for which attempt, and its definition's YAML. */
export interface SubRunParent extends Pick<RunLineage, 'rootDagRunName' | 'rootDagRunId'> {
  workerId: string;
  ref: TaskRef;
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

/** Metadata key of the shared worker token (`Bearer <token>`). */
export const WORKER_AUTH_METADATA = 'authorization';
