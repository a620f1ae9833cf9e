#!/usr/bin/env node
// Typechecks every package's tests and benchmarks (noEmit projects outside the build graph).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const projects = readdirSync(join(root, 'packages'))
  .flatMap((p) => ['test', 'bench'].map((dir) => join('packages', p, dir, 'tsconfig.json')))
  .filter((p) => existsSync(join(root, p)))
  // tsc refuses a project with no inputs; a package without tests yet has nothing to check.
  .filter((p) => readdirSync(dirname(join(root, p))).some((f) => f.endsWith('.ts')));
if (existsSync(join(root, 'test-e2e', 'tsconfig.json'))) projects.push('test-e2e/tsconfig.json');

let failed = false;
for (const project of projects) {
  const result = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { stdio: 'inherit', cwd: root });
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
