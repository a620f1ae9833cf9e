import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { NodeStatus, RunStatus } from '@trellis/core';
import { ProcessSpawner } from '@trellis/engine';
import { cleanupRuns, nodeOf, readLog, runYaml, startYaml } from './support/run-yaml.js';
import { processesMatching, uniqueSleep } from './support/processes.js';

after(cleanupRuns);

const ROOT = resolve(import.meta.dirname, '..', '..', '..');

async function until(what: string, probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('process spawner', () => {
  test('steps that write to their files run from the spawner process; steps Node must read run here', async () => {
    const spawner = new ProcessSpawner();
    try {
      const result = await runYaml(
        `
steps:
  - {name: direct, command: 'echo "parent=$PPID"; echo oops >&2'}
  - {name: captured, command: 'echo $PPID', output: CAPTURED}
  - {name: failing, command: 'exit 3', continue_on: {failure: true}}
  - {name: missing, command: definitely-not-a-command-here}
`,
        { launcher: spawner.launch },
      );
      assert.equal(result.status, RunStatus.Failed);
      const direct = nodeOf(result, 'direct');
      assert.equal(direct.status, NodeStatus.Success);
      const parent = Number(/parent=(\d+)/.exec(readLog(direct.stdout))?.[1]);
      assert.ok(parent > 0 && parent !== process.pid, `the shell's parent is the spawner (${parent}), not this process (${process.pid})`);
      assert.equal(readLog(direct.stderr), 'oops\n');
      assert.equal(result.outputs.outputs.captured, String(process.pid), 'captured output goes through pipes in this process');
      assert.equal(nodeOf(result, 'failing').error, 'exit status 3');
      assert.equal(nodeOf(result, 'missing').error, 'exit status 127');
    } finally {
      await spawner.close();
    }
  });

  test('the process that spawns a step creates its log files; a step whose files cannot be opened fails with why', async () => {
    const spawner = new ProcessSpawner();
    try {
      for (const launcher of [spawner.launch, undefined]) {
        for (const streamLogs of [false, true]) {
          const logDir = mkdtempSync(join(tmpdir(), 'trellis-spawner-logs-'));
          // A directory where the step's stdout file belongs: opening it for append fails (EISDIR), even as root.
          mkdirSync(join(logDir, 'blocked.out'));
          // Bytes a file held before its step (an earlier attempt's) are not reported again.
          writeFileSync(join(logDir, 'fine.out'), 'earlier\n');
          // `slow` writes before and after the follower's first timed read (every 500 ms).
          const slow = streamLogs ? `  - {name: slow, command: 'echo a; sleep 1.5; echo b'}\n` : '';
          const result = await runYaml(`steps:\n  - {name: fine, command: 'echo made'}\n${slow}  - {name: blocked, command: 'echo never'}\n`, { logDir, streamLogs, ...(launcher !== undefined ? { launcher } : {}) });
          const how = `${launcher !== undefined ? 'spawner' : 'in process'}, streamLogs ${String(streamLogs)}`;
          assert.equal(readLog(nodeOf(result, 'fine').stdout), 'earlier\nmade\n', how);
          assert.ok(existsSync(nodeOf(result, 'fine').stderr), `the stderr file exists though nothing was written to it (${how})`);
          const chunks = (stream: string) => result.reporter.chunks.filter((c) => c.stream === stream).map((c) => ({ offset: c.offset, text: c.data.toString() }));
          assert.deepEqual(chunks('fine/stdout'), streamLogs ? [{ offset: 8, text: 'made\n' }] : [], how);
          if (streamLogs) {
            const parts = chunks('slow/stdout');
            assert.ok(parts.length >= 2, `read while running and at the end: ${JSON.stringify(parts)} (${how})`);
            assert.equal(parts.map((p) => p.text).join(''), 'a\nb\n', how);
            parts.reduce((offset, part) => (assert.equal(part.offset, offset, how), offset + part.text.length), 0);
          }
          const blocked = nodeOf(result, 'blocked');
          assert.equal(blocked.status, NodeStatus.Failed, how);
          assert.match(blocked.error ?? '', /cannot open the step's log files: EISDIR/, how);
          rmSync(logDir, { recursive: true, force: true });
        }
      }
    } finally {
      await spawner.close();
    }
  });

  test('stop reaches the process group through the spawner', async () => {
    const spawner = new ProcessSpawner();
    const marker = uniqueSleep();
    try {
      const run = startYaml(`steps:\n  - {name: tree, command: 'sleep ${marker} & sleep ${marker}; wait'}\n`, { launcher: spawner.launch });
      await until('the sleeps to start', () => processesMatching(`sleep ${marker}`).length >= 2);
      run.handle.stop();
      const result = await run.result;
      assert.equal(result.status, RunStatus.Aborted);
      assert.equal(nodeOf(result, 'tree').status, NodeStatus.Cancelled);
      assert.deepEqual(processesMatching(`sleep ${marker}`), [], 'no child process survives the stop');
    } finally {
      await spawner.close();
    }
  });

  test('a spawner that dies fails its steps, kills their processes, and is started again', async () => {
    const crashes: string[] = [];
    const spawner = new ProcessSpawner({ onCrash: (message) => crashes.push(message) });
    const marker = uniqueSleep();
    try {
      const run = startYaml(`steps:\n  - {name: long, command: 'echo "parent=$PPID"; sleep ${marker}'}\n`, { launcher: spawner.launch });
      await until('the sleep to start', () => processesMatching(`sleep ${marker}`).length >= 1);
      const parent = Number(/parent=(\d+)/.exec(readLog(run.handle.snapshot().nodes[0]?.stdout ?? ''))?.[1]);
      assert.ok(parent > 0 && parent !== process.pid);
      process.kill(parent, 'SIGKILL');
      const result = await run.result;
      assert.equal(result.status, RunStatus.Failed);
      assert.match(nodeOf(result, 'long').error ?? '', /process spawner was killed by SIGKILL/);
      assert.deepEqual(processesMatching(`sleep ${marker}`), [], 'the orphaned step is killed');
      assert.equal(crashes.length, 1);
      const again = await runYaml('steps:\n  - {name: after, command: echo fine}\n', { launcher: spawner.launch });
      assert.equal(again.status, RunStatus.Success, 'a new spawner runs the next step');
    } finally {
      await spawner.close();
    }
  });

  test('a spawner that cannot start at all is given up: steps are spawned in-process', async () => {
    const crashes: string[] = [];
    const spawner = new ProcessSpawner({ onCrash: (message) => crashes.push(message), entry: '/nonexistent/spawner-main.js' });
    try {
      const failed = [];
      for (let i = 0; i < 3; i += 1) failed.push(await runYaml('steps:\n  - {name: s, command: echo hi}\n', { launcher: spawner.launch }));
      for (const result of failed) assert.match(nodeOf(result, 's').error ?? '', /process spawner exited with code 1/);
      const result = await runYaml('steps:\n  - {name: s, command: \'echo "parent=$PPID"\'}\n', { launcher: spawner.launch });
      assert.equal(result.status, RunStatus.Success);
      assert.equal(readLog(nodeOf(result, 's').stdout), `parent=${process.pid}\n`, 'spawned by this process');
      assert.match(crashes.at(-1) ?? '', /failed 3 times before starting a step/);
    } finally {
      await spawner.close();
    }
  });

  test('a spawner whose fork fails fails the waiting step instead of hanging it; the next step gets a new spawner', async () => {
    const crashes: string[] = [];
    const spawner = new ProcessSpawner({ onCrash: (message) => crashes.push(message) });
    const execPath = process.execPath;
    try {
      // fork() runs process.execPath: a missing binary fails the fork as EAGAIN or EMFILE would, with 'error' and no 'exit'.
      process.execPath = '/nonexistent/node';
      const failed = await runYaml('steps:\n  - {name: s, command: echo hi}\n', { launcher: spawner.launch });
      process.execPath = execPath;
      assert.equal(failed.status, RunStatus.Failed);
      assert.match(nodeOf(failed, 's').error ?? '', /process spawner could not be started \(spawn \/nonexistent\/node ENOENT\)/);
      assert.match(crashes[0] ?? '', /could not be started/);
      const again = await runYaml('steps:\n  - {name: s, command: \'echo "parent=$PPID"\'}\n', { launcher: spawner.launch });
      assert.equal(again.status, RunStatus.Success);
      assert.notEqual(readLog(nodeOf(again, 's').stdout), `parent=${process.pid}\n`, 'spawned by a new spawner');
    } finally {
      process.execPath = execPath;
      await spawner.close();
    }
  });

  test('a fork that throws at once runs the step from this process instead', async () => {
    const crashes: string[] = [];
    const spawner = new ProcessSpawner({ onCrash: (message) => crashes.push(message) });
    const execPath = process.execPath;
    try {
      // fork() validates its arguments synchronously: a bad exec path makes it throw, as ENOMEM would.
      Object.assign(process, { execPath: 42 });
      const result = await runYaml('steps:\n  - {name: s, command: \'echo "parent=$PPID"\'}\n', { launcher: spawner.launch });
      process.execPath = execPath;
      assert.equal(result.status, RunStatus.Success);
      assert.equal(readLog(nodeOf(result, 's').stdout), `parent=${process.pid}\n`, 'spawned by this process');
      assert.match(crashes[0] ?? '', /could not be started .*; the step is spawned by this process/);
    } finally {
      process.execPath = execPath;
      await spawner.close();
    }
  });

  test('when its parent is killed, the spawner kills the running steps and exits', async () => {
    const marker = uniqueSleep();
    // A separate host process whose spawner runs one long step; the host is then SIGKILLed.
    const script = `
      import { ProcessSpawner } from '@trellis/engine';
      import { mkdtempSync, closeSync, openSync } from 'node:fs';
      import { join } from 'node:path';
      import { tmpdir } from 'node:os';
      const dir = mkdtempSync(join(tmpdir(), 'trellis-spawner-host-'));
      const path = join(dir, 'out');
      closeSync(openSync(path, 'a'));
      const spawner = new ProcessSpawner();
      void spawner.launch({ argv: ['sleep', '${marker}'], env: { PATH: process.env.PATH ?? '' }, cwd: dir, stdout: process.stdout, stderr: process.stderr,
        files: { stdoutPath: path, stderrPath: path }, signal: new AbortController().signal, stopSignal: 'SIGTERM', killAfterMs: 1000 });
    `;
    const host = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: 'inherit' });
    try {
      await until('the step to start', () => processesMatching(`sleep ${marker}`).length >= 1, 20_000);
      const spawners = processesMatching('spawner-main').filter((pid) => parentOf(pid) === host.pid);
      assert.equal(spawners.length, 1, 'the host runs one spawner');
      host.kill('SIGKILL');
      await until('the step to be killed', () => processesMatching(`sleep ${marker}`).length === 0);
      await until('the spawner to exit', () => !processesMatching('spawner-main').includes(spawners[0] ?? 0));
    } finally {
      host.kill('SIGKILL');
      for (const pid of processesMatching(`sleep ${marker}`)) process.kill(pid, 'SIGKILL');
    }
  });
});

function parentOf(pid: number): number {
  return Number(/PPid:\s+(\d+)/.exec(readLog(`/proc/${pid}/status`))?.[1] ?? 0);
}
