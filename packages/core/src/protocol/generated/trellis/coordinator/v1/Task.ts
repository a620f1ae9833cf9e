// Original file: protos/coordinator/v1/coordinator.proto

import type { TaskRef as _trellis_coordinator_v1_TaskRef, TaskRef__Output as _trellis_coordinator_v1_TaskRef__Output } from '../../../trellis/coordinator/v1/TaskRef.js';

export interface Task {
  'ref'?: (_trellis_coordinator_v1_TaskRef | null);
  'rootDagRunName'?: (string);
  'rootDagRunId'?: (string);
  'parentDagRunName'?: (string);
  'parentDagRunId'?: (string);
  /**
   * The exact definition to run (the text recorded for the run), and the file name it came from.
   */
  'specYaml'?: (string);
  'fileName'?: (string);
  /**
   * JSON array of {name, value} resolved parameters.
   */
  'paramsJson'?: (string);
  /**
   * Run-level environment (profile variables, and what a parent handed its sub-run, such as
   * ITEM) and secrets: sent only over this channel.
   */
  'env'?: ({[key: string]: string});
  'secrets'?: ({[key: string]: string});
  'queuedAt'?: (string);
  /**
   * The text of the DAG's relative dotenv files found beside its file on the coordinator, by
   * the entry that names them: a worker has no DAG file to look beside.
   */
  'dotenvFiles'?: ({[key: string]: string});
  /**
   * Values the run must mask wherever it shows them (logs, status, outputs): the secrets of a
   * parent that reached this sub-run through its params or env. Sent only over this channel.
   */
  'maskValues'?: (string)[];
}

export interface Task__Output {
  'ref': (_trellis_coordinator_v1_TaskRef__Output | null);
  'rootDagRunName': (string);
  'rootDagRunId': (string);
  'parentDagRunName': (string);
  'parentDagRunId': (string);
  /**
   * The exact definition to run (the text recorded for the run), and the file name it came from.
   */
  'specYaml': (string);
  'fileName': (string);
  /**
   * JSON array of {name, value} resolved parameters.
   */
  'paramsJson': (string);
  /**
   * Run-level environment (profile variables, and what a parent handed its sub-run, such as
   * ITEM) and secrets: sent only over this channel.
   */
  'env': ({[key: string]: string});
  'secrets': ({[key: string]: string});
  'queuedAt': (string);
  /**
   * The text of the DAG's relative dotenv files found beside its file on the coordinator, by
   * the entry that names them: a worker has no DAG file to look beside.
   */
  'dotenvFiles': ({[key: string]: string});
  /**
   * Values the run must mask wherever it shows them (logs, status, outputs): the secrets of a
   * parent that reached this sub-run through its params or env. Sent only over this channel.
   */
  'maskValues': (string)[];
}
