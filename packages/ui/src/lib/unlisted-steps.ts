/** What the decisions below read of a step change from a run's event stream. */
export interface StepChange {
  dagRunId: string;
  stepName: string;
  /** A lifecycle handler (onSuccess, onExit, …), not one of the steps. */
  handler: boolean;
  status?: number;
}

/** A change of one of this run's own steps (lifecycle handlers, other runs and changes without a status left out). */
export function isOwnStepChange(dagRunId: string, change: StepChange): boolean {
  return change.dagRunId === dagRunId && !change.handler && change.status !== undefined;
}

/**
 * Whether a step change of this run names a step the loaded run does not list: the run was read
 * before its host first reported its steps (a reporter holds a run's first report for up to
 * 150 ms to write it with the rest of its burst), so the page must read the run again rather
 * than drop the change, or it would show no step moving until the run's own status changes.
 */
export function listsTooFewSteps(dagRunId: string, nodes: ReadonlyArray<{ step: { name: string } }>, changes: readonly StepChange[]): boolean {
  const listed = new Set(nodes.map((n) => n.step.name));
  return changes.some((c) => isOwnStepChange(dagRunId, c) && !listed.has(c.stepName));
}
