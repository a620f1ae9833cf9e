#!/usr/bin/env node
// Runs every workspace's `bench` script in turn and prints their figures. Benchmarks, not
// timed tests, check the speed targets: a shared 2-core machine makes timed tests flaky.
// Every line a bench prints as `TARGET <name>: <value> (target <x>) PASS|MISS` is gathered
// into one table at the end.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const only = process.argv.slice(2);
const packages = readdirSync(join(root, 'packages'))
  .filter((p) => existsSync(join(root, 'packages', p, 'package.json')))
  .filter((p) => only.length === 0 || only.includes(p));

const TARGET_LINE = /^TARGET (.+?): (.+) \(target (.+)\) (PASS|MISS)\s*$/;

/** Runs one workspace's bench, echoing its output as it comes; resolves to its exit code and TARGET lines. */
function runBench(pkg) {
  return new Promise((resolvePromise) => {
    const child = spawn('npm', ['run', '--silent', 'bench', '-w', `packages/${pkg}`], { stdio: ['inherit', 'pipe', 'inherit'], cwd: root });
    const targets = [];
    let pending = '';
    const take = (line) => {
      const match = TARGET_LINE.exec(line);
      if (match !== null) targets.push({ pkg, name: match[1], value: match[2], goal: match[3], verdict: match[4] });
    };
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop() ?? '';
      lines.forEach(take);
    });
    child.on('close', (code) => {
      take(pending);
      resolvePromise({ code, targets });
    });
  });
}

function printSummary(rows, failedBenches) {
  console.log('\n=== targets');
  if (rows.length === 0) console.log('  (no bench printed a TARGET line)');
  const header = { pkg: 'package', name: 'target', value: 'measured', goal: 'goal', verdict: 'verdict' };
  const all = [header, ...rows];
  const width = (key) => Math.max(...all.map((r) => r[key].length));
  const line = (r) => `  ${r.pkg.padEnd(width('pkg'))}  ${r.name.padEnd(width('name'))}  ${r.value.padStart(width('value'))}  ${r.goal.padEnd(width('goal'))}  ${r.verdict}`;
  if (rows.length > 0) for (const r of all) console.log(line(r));
  const missed = rows.filter((r) => r.verdict === 'MISS').length;
  console.log(`  ${rows.length - missed} PASS, ${missed} MISS${failedBenches.length > 0 ? `; bench failed: ${failedBenches.join(', ')}` : ''}`);
}

const failedBenches = [];
const rows = [];
for (const pkg of packages) {
  const manifest = JSON.parse(readFileSync(join(root, 'packages', pkg, 'package.json'), 'utf8'));
  if (!manifest.scripts?.bench) continue;
  console.log(`\n=== bench: packages/${pkg}`);
  const { code, targets } = await runBench(pkg);
  rows.push(...targets);
  if (code !== 0) failedBenches.push(pkg);
}
printSummary(rows, failedBenches);
process.exit(failedBenches.length === 0 ? 0 : 1);
