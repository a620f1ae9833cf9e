import type { Dag, Step } from '../model/dag.js';
import type { Issues } from './issues.js';

/** Resolves `depends` entries written as step ids to step names. */
function resolveDepends(steps: Step[], issues: Issues): void {
  const names = new Set(steps.map((s) => s.name));
  const byId = new Map(steps.filter((s) => s.id !== undefined).map((s) => [s.id ?? '', s.name]));
  steps.forEach((step, i) => {
    step.depends = step.depends.map((dep) => {
      if (names.has(dep)) return dep;
      const viaId = byId.get(dep);
      if (viaId !== undefined) return viaId;
      issues.add(`steps[${i}].depends`, `unknown step "${dep}"`);
      return dep;
    });
    if (step.depends.includes(step.name)) issues.add(`steps[${i}].depends`, `step "${step.name}" depends on itself`);
  });
}

/** Reports one cycle per strongly connected loop, as `a -> b -> a`. */
function findCycles(steps: Step[], issues: Issues): void {
  const byName = new Map(steps.map((s) => [s.name, s]));
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string): void => {
    state.set(name, 'visiting');
    stack.push(name);
    for (const dep of byName.get(name)?.depends ?? []) {
      if (!byName.has(dep) || dep === name) continue;
      const seen = state.get(dep);
      if (seen === 'visiting') {
        const cycle = [...stack.slice(stack.indexOf(dep)), dep];
        issues.add('steps', `dependency cycle: ${cycle.join(' -> ')}`);
      } else if (seen === undefined) visit(dep);
    }
    stack.pop();
    state.set(name, 'done');
  };
  for (const step of steps) if (!state.has(step.name)) visit(step.name);
}

function checkUnique(steps: Step[], issues: Issues): void {
  const names = new Map<string, number>();
  const ids = new Map<string, number>();
  steps.forEach((step, i) => {
    const first = names.get(step.name);
    if (first !== undefined) issues.add(`steps[${i}].name`, `duplicate step name "${step.name}" (also steps[${first}])`);
    else names.set(step.name, i);
    if (step.id !== undefined) {
      const firstId = ids.get(step.id);
      if (firstId !== undefined) issues.add(`steps[${i}].id`, `duplicate step id "${step.id}" (also steps[${firstId}])`);
      else ids.set(step.id, i);
      if (names.has(step.id) && names.get(step.id) !== i) issues.add(`steps[${i}].id`, `"${step.id}" is also the name of another step`);
    }
  });
}

function checkRouters(dag: Dag, issues: Issues): void {
  const names = new Set(dag.steps.map((s) => s.name));
  dag.steps.forEach((step, i) => {
    if (step.type !== 'router') return;
    if (dag.type !== 'graph') issues.add(`steps[${i}].type`, 'router steps need type: graph');
    for (const route of step.router?.routes ?? []) {
      for (const target of route.targets) {
        if (!names.has(target)) issues.add(`steps[${i}].routes.${route.pattern}`, `unknown step "${target}"`);
      }
    }
  });
}

/**
 * Dependency structure: in a chain DAG each step depends on the one before (an explicit
 * `depends` is an error); in a graph DAG `depends` must name existing steps without cycles.
 */
export function linkSteps(dag: Dag, issues: Issues): void {
  checkUnique(dag.steps, issues);
  if (dag.type === 'chain') {
    dag.steps.forEach((step, i) => {
      if (step.depends.length > 0) issues.add(`steps[${i}].depends`, 'not allowed when type is chain (use type: graph)');
      const previous = dag.steps[i - 1];
      step.depends = previous !== undefined ? [previous.name] : [];
    });
  } else {
    resolveDepends(dag.steps, issues);
    findCycles(dag.steps, issues);
  }
  checkRouters(dag, issues);
}
