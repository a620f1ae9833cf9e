// The spawner process: starts step processes for a ProcessSpawner in the parent. It loads
// nothing but the process-group code, so its small heap makes each fork cheap (not even
// @trellis/core: its schema and YAML libraries would load with it).
import { Writable } from 'node:stream';
import { runInProcessGroup, signalGroup } from '../process-group.js';
import type { FromSpawner, SpawnMessage, ToSpawner } from './protocol.js';

const discard = new Writable({ write: (_chunk, _encoding, callback) => callback() });
const running = new Map<number, { controller: AbortController; pid?: number }>();

function send(message: FromSpawner): void {
  if (process.connected) process.send?.(message);
}

async function spawnStep(message: SpawnMessage): Promise<void> {
  const entry: { controller: AbortController; pid?: number } = { controller: new AbortController() };
  running.set(message.id, entry);
  try {
    const result = await runInProcessGroup({
      argv: message.argv,
      env: message.env,
      cwd: message.cwd,
      stdout: discard,
      stderr: discard,
      files: { stdoutPath: message.stdoutPath, stderrPath: message.stderrPath },
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
    // runInProcessGroup answers its failures; this is for the unexpected, which must end only
    // this step, and not leave its processes running where no stop could reach them.
    signalGroup(entry.pid, 'SIGKILL');
    send({ t: 'ended', id: message.id, result: { exitCode: 1, signal: null, stopped: false, error: `the step could not be run: ${error instanceof Error ? error.message : String(error)}` } });
  } finally {
    running.delete(message.id);
  }
}

process.on('message', (message: ToSpawner) => {
  if (message.t === 'spawn') void spawnStep(message);
  else running.get(message.id)?.controller.abort();
});

// The parent is gone (it exited, or was killed): nobody will record what the steps do, so
// they are killed rather than left running as orphans.
process.on('disconnect', () => {
  for (const { pid } of running.values()) signalGroup(pid, 'SIGKILL');
  process.exit(0);
});

// Signals meant for the parent's process group (Ctrl-C, a service manager's SIGTERM to every
// process) must not end the steps early: the parent drains them and then disconnects.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);
