#!/usr/bin/env node
// Runs every workspace's `bench` script in turn and prints their figures. Benchmarks, not
// timed tests, check the speed targets: a shared 2-core machine makes timed tests flaky.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const only = process.argv.slice(2);
const packages = readdirSync(join(root, 'packages'))
  .filter((p) => existsSync(join(root, 'packages', p, 'package.json')))
  .filter((p) => only.length === 0 || only.includes(p));

let failed = 0;
for (const pkg of packages) {
  const manifest = JSON.parse(readFileSync(join(root, 'packages', pkg, 'package.json'), 'utf8'));
  if (!manifest.scripts?.bench) continue;
  console.log(`\n=== bench: packages/${pkg}`);
  const result = spawnSync('npm', ['run', '--silent', 'bench', '-w', `packages/${pkg}`], { stdio: 'inherit', cwd: root });
  if (result.status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
