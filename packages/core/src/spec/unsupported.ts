import type { Dag, Step } from '../model/dag.js';
import type { Issues } from './issues.js';

/**
 * Settings the spec accepts that this build cannot carry out. Where a DAG asks its steps to run
 * somewhere else (over SSH, in a container), running them on the worker's own host instead
 * would report success for work not done where it was asked, so such definitions are invalid.
 */

const ELSEWHERE = "remove it to run the steps on the worker's own host";

/** DAG-level `ssh` and `container`: refused until the ssh and container executors exist. */
export function refuseRemoteDagPlacement(dag: Dag, issues: Issues): void {
  if (dag.ssh !== undefined) issues.add('ssh', `running steps over SSH is not available in this build; ${ELSEWHERE}`);
  if (dag.container !== undefined) issues.add('container', `running steps in a container is not available in this build; ${ELSEWHERE}`);
}

/** Step-level `container` (handlers too): refused for the same reason. */
export function refuseStepContainer(step: Step, path: string, issues: Issues): void {
  if (step.container !== undefined) issues.add(`${path}.container`, "running a step in a container is not available in this build; remove it to run the step on the worker's own host");
}
