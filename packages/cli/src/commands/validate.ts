import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { loadDag, type DagLoadResult } from '@trellis/core';
import { UsageError, parseCommandArgs } from '../args.js';

export const validateHelp = `Usage: trellis validate FILE...

Checks DAG definition files and prints every problem, each naming its field
(steps[2].retry_policy.limit: must be a non-negative integer). Exit status 1 when any
file is invalid. Warnings (settings that are valid but will not take effect, such as
mail settings in a build without mail delivery) are printed too; they do not make a
file invalid.

Options:
  -h, --help   show this help
`;

export async function loadFile(path: string): Promise<DagLoadResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return { localDags: [], errors: [`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`], warnings: [] };
  }
  return loadDag(text, { fileName: basename(path, extname(path)) });
}

export async function validateCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(argv, {});
  if (parsed.values.help === true) {
    process.stdout.write(validateHelp);
    return 0;
  }
  if (parsed.positionals.length === 0) throw new UsageError('name at least one DAG file');
  let invalid = 0;
  for (const path of parsed.positionals) {
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
