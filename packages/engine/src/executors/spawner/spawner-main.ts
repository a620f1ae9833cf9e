// The spawner process: starts step processes for a ProcessSpawner in the parent. It loads
// nothing but the process-group code, so its small heap makes each fork cheap (not even
// @trellis/core: its schema and YAML libraries would load with it).
import { closeSync, openSync } from 'node:fs';
import { Writable } from 'node:stream';
import { runInProcessGroup } from '../process-group.js';
import type { FromSpawner, SpawnMessage, ToSpawner } from './protocol.js';

const discard = new Writable({ write: (_chunk, _encoding, callback) => callback() });
const running = new Map<number, { controller: AbortController; pid?: number }>();

function send(message: FromSpawner): void {
  if (process.connected) process.send?.(message);
}

function openLogs(message: SpawnMessage): { out: number; err: number } {
  const out = openSync(message.stdoutPath, 'a');
  try {
    return { out, err: message.stderrPath === message.stdoutPath ? out : openSync(message.stderrPath, 'a') };
  } catch (error) {
    closeSync(out);
    throw error;
  }
}

async function spawnStep(message: SpawnMessage): Promise<void> {
  const entry: { controller: AbortController; pid?: number } = { controller: new AbortController() };
  running.set(message.id, entry);
  let fds: { out: number; err: number } | undefined;
  try {
    fds = openLogs(message);
    const result = await runInProcessGroup({
      argv: message.argv,
      env: message.env,
      cwd: message.cwd,
      stdout: discard,
      stderr: discard,
      files: { stdoutPath: message.stdoutPath, stderrPath: message.stderrPath, stdoutFd: fds.out, stderrFd: fds.err },
      signal: entry.controller.signal,
      stopSignal: message.stopSignal,
      killAfterMs: message.killAfterMs,
      onStart: (pid) => {
        entry.pid = pid;
        send({ t: 'started', id: message.id, pid });
      },
    });
    send({ t: 'ended', id: message.id, result });
  } catch (error) {
    send({ t: 'ended', id: message.id, result: { exitCode: 1, signal: null, stopped: false, error: `cannot open the step's log files: ${(error instanceof Error ? error.message : String(error))}` } });
  } finally {
    running.delete(message.id);
    if (fds !== undefined) {
      closeSync(fds.out);
      if (fds.err !== fds.out) closeSync(fds.err);
    }
  }
}

process.on('message', (message: ToSpawner) => {
  if (message.t === 'spawn') void spawnStep(message);
  else running.get(message.id)?.controller.abort();
});

// The parent is gone (it exited, or was killed): nobody will record what the steps do, so
// they are killed rather than left running as orphans.
process.on('disconnect', () => {
  for (const { pid } of running.values()) {
    if (pid === undefined) continue;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // ESRCH: already gone.
    }
  }
  process.exit(0);
});

// Signals meant for the parent's process group (Ctrl-C, a service manager's SIGTERM to every
// process) must not end the steps early: the parent drains them and then disconnects.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);
