import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus } from '@trellis/core';
import { MemoryReporter, type RunResult, type RunSnapshot } from '@trellis/engine';
import { cleanupRuns, nodeOf, readLog, runYaml, startYaml } from './support/run-yaml.js';
import { processesMatching, uniqueSleep } from './support/processes.js';
import { podmanForFile } from './support/podman.js';
import { pollUntil } from './support/poll.js';

const podman = podmanForFile();
const { hostEnv, containers } = podman;
after(cleanupRuns);

/**
 * A run stopped while its DAG-level container (with `fields` added to its config) gets ready:
 * the exit handler, which runs anyway, gets a container of its own.
 */
async function stoppedWhileGettingReady(fields: string): Promise<RunResult> {
  const run = startYaml(
    `container: {image: ${podman.service.image}${fields}, startup: entrypoint, command: [sh, -c, "sleep 2; echo up; exec sleep 600"], log_pattern: up}
handler_on:
  exit: {command: echo handled}
steps:
  - {name: never, command: echo never}
`,
    { hostEnv: hostEnv() },
  );
  await run.reporter.waitFor((s) => s.nodes[0]?.status === NodeStatus.Running);
  run.handle.stop();
  const result = await run.result;
  assert.deepEqual([result.status, result.snapshot.nodes[0]?.status], [RunStatus.Aborted, NodeStatus.Cancelled]);
  const exit = result.snapshot.handlers.exit;
  assert.deepEqual([exit?.status, readLog(exit?.stdout ?? '')], [NodeStatus.Success, 'handled\n'], exit?.error);
  return result;
}

describe('a DAG-level image-mode container is one container for the whole run (podman)', () => {
  test('every step and the exit handler run in the same container, which is gone after the run', async () => {
    const before = containers();
    const result = await runYaml(
      `
type: graph
container: {image: ${podman.service.image}, env: {FROM_DAG: dag}}
handler_on:
  exit:
    command: cat /tmp/shared
steps:
  - name: write
    command: echo "written by write" > /tmp/shared; cat /etc/hostname
    output: FIRST_HOST
  - name: read
    depends: write
    env:
      - OWN: step
    command: echo "$(cat /tmp/shared) $FROM_DAG $OWN"; cat /etc/hostname
    output: SECOND
  - name: typed
    type: docker
    depends: write
    command: cat /etc/hostname
    output: TYPED_HOST
`,
      { hostEnv: hostEnv() },
    );
    assert.equal(result.status, RunStatus.Success, result.snapshot.error);
    const host = result.outputs.outputs.firstHost ?? '';
    assert.match(host, /^\w+$/);
    assert.equal(result.outputs.outputs.second, `written by write dag step\n${host}`);
    assert.equal(result.outputs.outputs.typedHost, host, 'a docker step without config also runs in it');
    assert.equal(readLog(result.snapshot.handlers.exit?.stdout ?? ''), 'written by write\n', 'the exit handler runs in it too');
    assert.match(readLog(nodeOf(result, 'write').stderr), /^docker: run container \w{12} from localhost\/trellis-busybox:test\n$/);
    assert.equal(readLog(nodeOf(result, 'read').stderr), '', 'only the first step starts it');
    assert.deepEqual(containers(), before, 'the run container is removed at the end of the run');
  });

  test('a failed run and a stopped run remove it too, also one stopped before it was ready; keep_container leaves it', async () => {
    const before = containers();
    // A log pattern it never prints: running for a moment is not ready (wait_for: running alone races the exit).
    const failed = await runYaml(`container: {image: ${podman.service.image}}\nsteps:\n  - {name: one, command: touch /tmp/x}\n  - {name: two, command: test ! -e /tmp/x}\n`, { hostEnv: hostEnv() });
    assert.deepEqual([failed.status, nodeOf(failed, 'one').status, nodeOf(failed, 'two').error], [RunStatus.Failed, NodeStatus.Success, 'exit status 1']);
    assert.deepEqual(containers(), before);

    const seconds = uniqueSleep();
    const run = startYaml(`container: {image: ${podman.service.image}}\nsteps:\n  - {name: long, command: sleep ${seconds}}\n`, { hostEnv: hostEnv() });
    await pollUntil(() => processesMatching(`sleep ${seconds}`).length > 0);
    assert.notDeepEqual(processesMatching(`sleep ${seconds}`), [], 'the step started in the container');
    run.handle.stop();
    const stopped = await run.result;
    assert.deepEqual([stopped.status, stopped.snapshot.nodes[0]?.status], [RunStatus.Aborted, NodeStatus.Cancelled]);
    assert.deepEqual(processesMatching(`sleep ${seconds}`), []);
    assert.deepEqual(containers(), before);

    const early = await stoppedWhileGettingReady('');
    assert.equal(readLog(early.snapshot.nodes[0]?.stdout ?? ''), '');
    assert.deepEqual(containers(), before);

    const name = `trellis-kept-${process.pid}`;
    const kept = await runYaml(`container: {image: ${podman.service.image}, name: ${name}, keep_container: true}\nsteps:\n  - {name: one, command: touch /tmp/kept}\n`, { hostEnv: hostEnv() });
    assert.equal(kept.status, RunStatus.Success, kept.snapshot.error);
    assert.deepEqual(containers(), [...before, name]);
    assert.equal(podman.service.podman(['exec', name, 'ls', '/tmp/kept']).trim(), '/tmp/kept');
    podman.service.podman(['rm', '-f', '-t', '0', name]);
  });

  test('keep_container keeps only a container that became ready: one stopped or failed on the way is removed, its name free again', async () => {
    const before = containers();
    const name = `trellis-unready-${process.pid}`;
    // The exit handler's container takes the name: the one stopped on its way is gone.
    await stoppedWhileGettingReady(`, name: ${name}, keep_container: true`);
    assert.deepEqual(containers(), [...before, name], 'the container the exit handler got ready is kept');
    podman.service.podman(['rm', '-f', '-t', '0', name]);

    // A log pattern it never prints: running for a moment is not ready (wait_for: running alone races the exit).
    const failed = await runYaml(`container: {image: ${podman.service.image}, name: ${name}, keep_container: true, startup: entrypoint, command: [sh, -c, "exit 3"], log_pattern: never}\nsteps:\n  - {name: one, command: echo never}\n`, { hostEnv: hostEnv() });
    assert.equal(nodeOf(failed, 'one').error, 'container exited (status 3) before it was ready');
    assert.deepEqual(containers(), before, 'a container that failed its readiness is not kept');
  });

  test('a host reporter that throws while the handlers run still has the run container removed', async () => {
    const before = containers();
    // A host's reporter (the worker's buffer, the coordinator's recorder) can fail; the run then fails, its container must not stay.
    class FailingReporter extends MemoryReporter {
      override onStatus(snapshot: RunSnapshot): void {
        super.onStatus(snapshot);
        if (snapshot.handlers.exit !== undefined) throw new Error('the host refused the report');
      }
    }
    const reporter = new FailingReporter();
    const run = startYaml(`container: {image: ${podman.service.image}}\nhandler_on:\n  exit: {command: echo handled}\nsteps:\n  - {name: one, command: touch /tmp/x}\n`, { hostEnv: hostEnv(), reporter });
    await assert.rejects(run.result, /the host refused the report/);
    const ran = reporter.snapshots.find((s) => s.nodes[0]?.status === NodeStatus.Success);
    assert.ok(ran, 'the step ran in the run container');
    assert.match(readLog(ran.nodes[0]?.stderr ?? ''), /^docker: run container \w{12} from /);
    assert.deepEqual(containers(), before);
  });

  test('wait_for healthy holds the steps back until the image HEALTHCHECK passes', async () => {
    // Podman runs health checks from systemd timers, and there is no systemd here: the test
    // runs each check itself, as the timer would.
    const image = podman.service.build('trellis-healthy', `FROM ${podman.service.image}\nHEALTHCHECK --interval=1s --timeout=5s CMD test -e /tmp/ready\n`);
    const name = `trellis-healthy-${process.pid}`;
    const run = startYaml(
      `
container:
  image: ${image}
  name: ${name}
  startup: entrypoint
  command: [sh, -c, "sleep 2; touch /tmp/ready; exec sleep 600"]
  wait_for: healthy
steps:
  - {name: after-healthy, command: ls /tmp/ready}
`,
      { hostEnv: hostEnv() },
    );
    const health: string[] = [];
    let ended = false;
    void run.result.finally(() => (ended = true));
    while (!ended) {
      try {
        podman.service.podman(['healthcheck', 'run', name]);
        health.push('healthy');
      } catch {
        // Not created yet, or not healthy yet: the next round checks again.
        health.push('not yet');
      }
      await new Promise((r) => setTimeout(r, 300));
    }
    const result = await run.result;
    assert.equal(nodeOf(result, 'after-healthy').status, NodeStatus.Success, nodeOf(result, 'after-healthy').error);
    assert.equal(readLog(nodeOf(result, 'after-healthy').stdout), '/tmp/ready\n');
    assert.ok(health.includes('not yet') && health.includes('healthy'), health.join(','));
    assert.ok(!containers().includes(name));
  });
});
