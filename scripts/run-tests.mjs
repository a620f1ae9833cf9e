#!/usr/bin/env node
// Runs the TypeScript test files straight from source with Node's own test runner.
// Node 20's `--test` cannot glob, so the files are found here. Arguments name the
// folders to search (default: every package) or single test files; `test-e2e` holds the
// cluster tests.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const roots = args.length > 0 ? args : readdirSync(join(root, 'packages')).map((p) => join('packages', p));

function findTests(dir, out) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist' || entry === 'fixtures') continue;
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) findTests(full, out);
    else if (entry.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

const files = roots.flatMap((r) => {
  const abs = resolve(root, r);
  if (abs.endsWith('.test.ts') && existsSync(abs)) return [abs];
  const testDir = join(abs, 'test');
  return findTests(existsSync(testDir) ? testDir : abs, []);
}).sort();

if (files.length === 0) {
  console.error(`run-tests: no test files under ${roots.join(', ')}`);
  process.exit(1);
}

const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// Node 20 applies --test-timeout to each test file's process: a file that hangs (a server that
// never answers, a process no signal reached) fails after this long instead of holding CI.
const fileTimeoutMs = process.env.TEST_FILE_TIMEOUT_MS ?? '900000';
const result = spawnSync(
  process.execPath,
  ['--conditions=source', '--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${fileTimeoutMs}`, ...files],
  { stdio: 'inherit', cwd: root },
);
process.exit(result.status ?? 1);
