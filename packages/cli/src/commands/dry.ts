import { resolveStartParams } from '@trellis/core';
import { UsageError, parseCommandArgs, stringFlag } from '../args.js';
import { loadFile } from './validate.js';

export const dryHelp = `Usage: trellis dry FILE [--params JSON]

Shows what a run would do, without running anything: the resolved params, then every step
in the order it can start, with what it depends on and what it runs.

Options:
  --params JSON   params as a start request sends them: a JSON object of named values,
                  a JSON array of positional values, or shell-style text (A=1 B=2)
  -h, --help      show this help
`;

export async function dryCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(argv, { params: { type: 'string' } });
  if (parsed.values.help === true) {
    process.stdout.write(dryHelp);
    return 0;
  }
  const [path] = parsed.positionals;
  if (path === undefined) throw new UsageError('name a DAG file');
  const result = await loadFile(path);
  if (result.dag === undefined) {
    process.stderr.write(`${path} is invalid:\n${result.errors.map((e) => `  - ${e}`).join('\n')}\n`);
    return 1;
  }
  const dag = result.dag;
  const params = resolveStartParams(dag.params, stringFlag(parsed, 'params'));
  if (!params.ok) {
    process.stderr.write(`params rejected:\n${params.errors.map((e) => `  - ${e}`).join('\n')}\n`);
    return 1;
  }
  const lines = [`DAG ${dag.name} (${dag.type}, max_active_steps ${dag.maxActiveSteps})`, 'params:'];
  for (const p of params.params) lines.push(`  ${p.name}=${p.value}${p.evaluate === true ? '  (evaluated when the run starts)' : ''}`);
  lines.push('steps:');
  for (const step of dag.steps) {
    const what = step.call !== undefined ? `runs DAG ${step.call}` : step.commands.length > 0 ? step.commands.join(' && ') : step.script !== undefined ? 'runs a script' : step.type;
    lines.push(`  ${step.name} [${step.type}]${step.depends.length > 0 ? ` after ${step.depends.join(', ')}` : ''}: ${what}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
