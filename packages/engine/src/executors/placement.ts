import { containerConfigOf, containerOfStep, type Dag, type Step } from '@trellis/core';

/**
 * The step as it will run: a shell step in a container (its own `container`, else the DAG's)
 * becomes a docker step, one in a DAG with a DAG-level `ssh` an ssh step; typed ssh and docker
 * steps start from the DAG-level settings. Done before `${...}` expansion, so references in
 * the commands are expanded as text for the remote shell rather than bound as local variables.
 */
export function placeStep(step: Step, dag: Pick<Dag, 'container' | 'ssh'>): Step {
  const container = containerOfStep(step, dag);
  if (container !== undefined) return { ...step, type: 'docker', config: containerConfigOf(container) };
  if (step.type === 'shell' && dag.ssh !== undefined) return { ...step, type: 'ssh', config: { ...dag.ssh } };
  if (step.type === 'ssh' && dag.ssh !== undefined) return { ...step, config: { ...dag.ssh, ...step.config } };
  if (step.type === 'docker' && Object.keys(step.config).length === 0 && dag.container !== undefined) return { ...step, config: containerConfigOf(dag.container) };
  return step;
}

/**
 * A DAG-level container in image mode is one container for the whole run: every step that takes
 * it (a shell step without its own, a docker step without config) is exec'd in it.
 */
export function runsInDagContainer(step: Step, dag: Pick<Dag, 'container'>): boolean {
  const container = dag.container;
  if (container === undefined || typeof container === 'string' || !('image' in container)) return false;
  return (step.type === 'shell' && step.container === undefined) || (step.type === 'docker' && Object.keys(step.config).length === 0);
}
