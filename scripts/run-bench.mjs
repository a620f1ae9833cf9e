#!/usr/bin/env node
// Runs every workspace's `bench` script in turn and prints their figures. Benchmarks, not
// timed tests, check the speed targets: a shared 2-core machine makes timed tests flaky.
// Every line a bench prints as `TARGET <name>: <value> (target <x>) PASS|MISS` is gathered
// into one table at the end.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, realpathSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const only = process.argv.slice(2);
const packages = readdirSync(join(root, 'packages'))
  .filter((p) => existsSync(join(root, 'packages', p, 'package.json')))
  .filter((p) => only.length === 0 || only.includes(p));

/**
 * Where the benches keep their files (data and log directories, DAG folders, the Dagu install):
 * TRELLIS_BENCH_TMPDIR, else a folder in /dev/shm when it has room and lets programs run there,
 * else the default temp folder. Each bench writes and then deletes thousands of run directories,
 * and an ext4 without a journal (this CI machine's root) skips every inode deleted in the last
 * 60-360 s when it allocates one: after one bench's clean-up, the next bench's creations cost
 * 0.3-0.8 ms each instead of about 15 us (perf: ext4 `recently_deleted`), a figure of the previous
 * bench rather than of the code measured. In memory, every bench starts on the same disk.
 */
function benchTmpdir() {
  if (process.env.TRELLIS_BENCH_TMPDIR) return process.env.TRELLIS_BENCH_TMPDIR;
  const shm = '/dev/shm';
  // The Dagu binary runs from its cache there; the benches write well under 4 GB.
  if (!existsSync(shm) || mountedNoexec(shm)) return tmpdir();
  const space = statfsSync(shm);
  if (space.bavail * space.bsize < 4 * 1024 ** 3) return tmpdir();
  const dir = join(shm, `trellis-bench-${process.getuid()}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Anyone may write in /dev/shm, and the benches run programs they keep here (Dagu): only a
  // folder of this user's own, that no one else can write to, is used.
  const own = lstatSync(dir);
  if (!own.isDirectory() || own.uid !== process.getuid() || (own.mode & 0o022) !== 0) return tmpdir();
  return dir;
}

function mountedNoexec(path) {
  const real = realpathSync(path);
  // The last mount of a path is the one in effect.
  const mount = readFileSync('/proc/mounts', 'utf8').split('\n').map((line) => line.split(' ')).findLast((fields) => fields[1] === real);
  return mount?.[3]?.split(',').includes('noexec') ?? false;
}

/** Microseconds a directory with one file in it takes to create, in `dir`: what a run's log folder costs there. */
function createCostMicros(dir) {
  const probe = mkdtempSync(join(dir, 'fs-probe-'));
  const count = 200;
  const started = performance.now();
  for (let i = 0; i < count; i += 1) {
    mkdirSync(join(probe, String(i)));
    closeSync(openSync(join(probe, String(i), 'out'), 'a'));
  }
  const micros = ((performance.now() - started) * 1000) / count;
  rmSync(probe, { recursive: true, force: true });
  return micros;
}

const TARGET_LINE = /^TARGET (.+?): (.+) \(target (.+)\) (PASS|MISS)\s*$/;

/** Runs one workspace's bench, echoing its output as it comes; resolves to its exit code and TARGET lines. */
function runBench(pkg) {
  return new Promise((resolvePromise) => {
    const child = spawn('npm', ['run', '--silent', 'bench', '-w', `packages/${pkg}`], { stdio: ['inherit', 'pipe', 'inherit'], cwd: root, env: { ...process.env, TMPDIR: benchDir } });
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

const benchDir = benchTmpdir();
const failedBenches = [];
const rows = [];
for (const pkg of packages) {
  const manifest = JSON.parse(readFileSync(join(root, 'packages', pkg, 'package.json'), 'utf8'));
  if (!manifest.scripts?.bench) continue;
  console.log(`\n=== bench: packages/${pkg}`);
  console.log(`  temp files in ${benchDir}: a folder and a file ${createCostMicros(benchDir).toFixed(0)} us (in ${tmpdir()}: ${createCostMicros(tmpdir()).toFixed(0)} us)`);
  const { code, targets } = await runBench(pkg);
  rows.push(...targets);
  if (code !== 0) failedBenches.push(pkg);
}
printSummary(rows, failedBenches);
process.exit(failedBenches.length === 0 ? 0 : 1);
