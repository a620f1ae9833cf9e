import type { Step, StepType } from '../model/dag.js';
import type { Issues } from './issues.js';

/** Step types this build has no executor for: a DAG using one fails validation, so no step of it fails later or runs elsewhere. */
export const UNAVAILABLE_STEP_TYPES: ReadonlySet<StepType> = new Set<StepType>(['chat', 'agent', 'gha']);

export function unavailableTypeMessage(type: StepType): string {
  return `step type "${type}" is not available in this build; the DAG cannot run until it is`;
}

/** A step (or handler) of a type without an executor, named by its `type` path. */
export function refuseUnavailableType(step: Step, path: string, issues: Issues): void {
  if (UNAVAILABLE_STEP_TYPES.has(step.type)) issues.add(`${path}.type`, unavailableTypeMessage(step.type));
}
