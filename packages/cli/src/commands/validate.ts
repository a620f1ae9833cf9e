import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import type { DagLoadResult } from '@trellis/core';
import { toError } from '@trellis/core/protocol';
import type { Command } from 'commander';
import { exitWith } from '../args.js';

export async function loadFile(path: string): Promise<DagLoadResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return { localDags: [], errors: [`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? toError(error).message}`], warnings: [] };
  }
  // The DAG parser (yaml, zod and the schemas) is loaded by the commands that parse, not by every command.
  const { loadDag } = await import('@trellis/core');
  return loadDag(text, { fileName: basename(path, extname(path)) });
}

export function addValidateCommand(program: Command): void {
  program
    .command('validate <file...>')
    .summary('check DAG definition files')
    .description('Checks DAG definition files and prints every problem, each naming its field (steps[2].retry_policy.limit: must be a non-negative integer). Warnings (settings that are valid but will not take effect) are printed too; they do not make a file invalid.')
    .addHelpText('after', '\nExit status: 0 when every file is valid, 1 when any is invalid, 2 for a usage error.\n')
    .action(exitWith(validateCommand));
}

async function validateCommand(paths: string[]): Promise<number> {
  let invalid = 0;
  for (const path of paths) {
    const result = await loadFile(path);
    const localErrors = result.localDags.flatMap((l) => l.errors.map((e) => `local DAG ${l.name}: ${e}`));
    const errors = [...result.errors, ...localErrors];
    if (errors.length === 0) {
      process.stdout.write(`${path}: valid (${result.dag?.steps.length ?? 0} steps)\n`);
    } else {
      invalid += 1;
      process.stdout.write(`${path}: ${errors.length} problem(s)\n${errors.map((e) => `  - ${e}`).join('\n')}\n`);
    }
    for (const warning of result.warnings) process.stdout.write(`  warning: ${warning}\n`);
  }
  return invalid === 0 ? 0 : 1;
}
