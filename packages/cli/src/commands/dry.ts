import type { Command } from 'commander';
import { exitWith } from '../args.js';
import { loadFile } from './validate.js';

export function addDryCommand(program: Command): void {
  program
    .command('dry <file>')
    .summary('show what a run of a DAG file would do, without running it')
    .description('Shows what a run would do, without running anything: the resolved params, then every step in the order it can start, with what it depends on and what it runs.')
    .option('--params <json>', 'params as a start request sends them: a JSON object of named values, a JSON array of positional values, or shell-style text (A=1 B=2)')
    .addHelpText('after', '\nExit status: 0, or 1 when the file or the params are invalid.\n')
    .action(exitWith(dryCommand));
}

async function dryCommand(path: string, options: { params?: string }): Promise<number> {
  const result = await loadFile(path);
  if (result.dag === undefined) {
    process.stderr.write(`${path} is invalid:\n${result.errors.map((e) => `  - ${e}`).join('\n')}\n`);
    return 1;
  }
  const dag = result.dag;
  const { resolveStartParams } = await import('@trellis/core');
  const params = resolveStartParams(dag.params, options.params);
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
