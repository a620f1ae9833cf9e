// Original file: protos/coordinator/v1/coordinator.proto

import type { TaskRef as _trellis_coordinator_v1_TaskRef, TaskRef__Output as _trellis_coordinator_v1_TaskRef__Output } from '../../../trellis/coordinator/v1/TaskRef.js';

export interface StartSubRunRequest {
  'workerId'?: (string);
  'parent'?: (_trellis_coordinator_v1_TaskRef | null);
  'rootDagRunName'?: (string);
  'rootDagRunId'?: (string);
  'dagName'?: (string);
  /**
   * Inline definition of a local DAG, when the child is not a stored DAG file.
   */
  'specYaml'?: (string);
  'paramsJson'?: (string);
  /**
   * Deterministic child id, so a resend after a reconnect does not start a second child.
   */
  'dagRunId'?: (string);
  /**
   * Labels the child's worker must carry; empty: the parent's placement.
   */
  'workerSelector'?: ({[key: string]: string});
  /**
   * The step asked for `worker_selector: local`: the coordinator's own executor runs the child.
   */
  'runLocal'?: (boolean);
  /**
   * Run-level variables the parent hands the child, such as ITEM for a `parallel` item: the
   * child sees each as an environment variable and as ${NAME}. Recorded with the child's run
   * and sent in its Task.env; never secrets (those are resolved by the coordinator, per run).
   */
  'env'?: ({[key: string]: string});
  /**
   * The parent's secret values that params_json or env carry: the child's record shows them
   * masked and the child masks them in what it reports.
   */
  'maskValues'?: (string)[];
}

export interface StartSubRunRequest__Output {
  'workerId': (string);
  'parent': (_trellis_coordinator_v1_TaskRef__Output | null);
  'rootDagRunName': (string);
  'rootDagRunId': (string);
  'dagName': (string);
  /**
   * Inline definition of a local DAG, when the child is not a stored DAG file.
   */
  'specYaml': (string);
  'paramsJson': (string);
  /**
   * Deterministic child id, so a resend after a reconnect does not start a second child.
   */
  'dagRunId': (string);
  /**
   * Labels the child's worker must carry; empty: the parent's placement.
   */
  'workerSelector': ({[key: string]: string});
  /**
   * The step asked for `worker_selector: local`: the coordinator's own executor runs the child.
   */
  'runLocal': (boolean);
  /**
   * Run-level variables the parent hands the child, such as ITEM for a `parallel` item: the
   * child sees each as an environment variable and as ${NAME}. Recorded with the child's run
   * and sent in its Task.env; never secrets (those are resolved by the coordinator, per run).
   */
  'env': ({[key: string]: string});
  /**
   * The parent's secret values that params_json or env carry: the child's record shows them
   * masked and the child masks them in what it reports.
   */
  'maskValues': (string)[];
}
