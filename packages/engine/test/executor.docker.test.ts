import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeStatus, RunStatus } from '@trellis/core';
import { cleanupRuns, nodeOf, readLog, runYaml, startYaml } from './support/run-yaml.js';
import { processesMatching, uniqueSleep } from './support/processes.js';
import { podmanForFile } from './support/podman.js';
import { pollUntil } from './support/poll.js';

const podman = podmanForFile();
const { hostEnv, containers } = podman;
after(cleanupRuns);

describe('container steps through the Docker Engine API (podman)', () => {
  test('image mode: step-level and DAG-level container run the commands in the image, env and working_dir applied, container removed', async () => {
    const before = containers();
    const result = await runYaml(`
container:
  image: ${podman.service.image}
  pull_policy: never
steps:
  - name: boxed
    container: {image: ${podman.service.image}, pull_policy: missing, env: [A=1], working_dir: /tmp}
    env:
      - B: two
    command: echo "in $(pwd) A=$A B=$B as $(id -u)"; echo err >&2
    output: BOXED
  - name: dag-level
    command:
      - "test -x /bin/busybox"
      - "echo only busybox here"
    output: DAG_LEVEL
  - name: failing
    command: exit 5
`, { hostEnv: hostEnv() });
    assert.equal(nodeOf(result, 'boxed').status, NodeStatus.Success, nodeOf(result, 'boxed').error);
    assert.equal(result.outputs.outputs.boxed, 'in /tmp A=1 B=two as 0');
    assert.match(readLog(nodeOf(result, 'boxed').stderr), /^docker: container \w{12} from localhost\/trellis-busybox:test\nerr\n$/);
    assert.equal(result.outputs.outputs.dagLevel, 'only busybox here');
    assert.deepEqual([nodeOf(result, 'failing').status, nodeOf(result, 'failing').error], [NodeStatus.Failed, 'exit status 5']);
    assert.deepEqual(containers(), before, 'no container is left behind');
  });

  test('keepalive with keep_container, then exec mode in it by name; wait_for and log_pattern gate the commands', async () => {
    const name = `trellis-box-${process.pid}`;
    const result = await runYaml(`
type: graph
steps:
  - name: start
    type: docker
    config: {image: ${podman.service.image}, name: ${name}, startup: keepalive, keep_container: true, wait_for: running}
    command: touch /tmp/made-by-start
  - name: exec
    depends: start
    container: ${name}
    command: ls /tmp/made-by-start
    output: LISTED
  - name: exec-object
    depends: start
    container: {exec: ${name}, user: "1000", working_dir: /tmp, env: {C: three}}
    command: echo "$(id -u) $(pwd) $C"
    output: AS_USER
  - name: logged
    type: docker
    config:
      image: ${podman.service.image}
      startup: entrypoint
      command: [sh, -c, "sleep 1; echo service ready; sleep 600"]
      log_pattern: "service (ready|up)"
    command: echo after the pattern
    output: LOGGED
  - name: exits-early
    type: docker
    config: {image: ${podman.service.image}, startup: entrypoint, command: [sh, -c, "exit 4"], log_pattern: never}
    command: echo never
`, { hostEnv: hostEnv() });
    for (const node of ['start', 'exec', 'exec-object', 'logged']) assert.equal(nodeOf(result, node).status, NodeStatus.Success, `${node}: ${nodeOf(result, node).error}`);
    assert.equal(result.outputs.outputs.listed, '/tmp/made-by-start');
    assert.equal(result.outputs.outputs.asUser, '1000 /tmp three');
    assert.equal(result.outputs.outputs.logged, 'after the pattern');
    assert.deepEqual([nodeOf(result, 'exits-early').status, nodeOf(result, 'exits-early').error], [NodeStatus.Failed, 'container exited (status 4) before it was ready']);
    assert.ok(containers().includes(name), 'keep_container leaves the container');
    podman.service.podman(['rm', '-f', name]);
    const missing = await runYaml(`steps:\n  - {name: gone, container: ${name}, command: echo hi}\n`, { hostEnv: hostEnv() });
    assert.match(nodeOf(missing, 'gone').error, new RegExp(`^container ${name} cannot be used: .*no such container`, 'i'));
  });

  test('keep_container keeps a step container that ran its commands, not one that never became ready', async () => {
    const before = containers();
    const name = `trellis-step-unready-${process.pid}`;
    const result = await runYaml(
      `steps:\n  - name: unready\n    type: docker\n    config: {image: ${podman.service.image}, name: ${name}, keep_container: true, startup: entrypoint, command: [sh, -c, "exit 4"], log_pattern: never}\n    command: echo never\n`,
      { hostEnv: hostEnv() },
    );
    assert.equal(nodeOf(result, 'unready').error, 'container exited (status 4) before it was ready');
    assert.deepEqual(containers(), before);
  });

  test('stop ends the container of an image-mode step and the process of an exec-mode step', async () => {
    const seconds = uniqueSleep();
    const run = startYaml(`steps:\n  - name: long\n    container: {image: ${podman.service.image}}\n    command: sleep ${seconds}\n`, { hostEnv: hostEnv() });
    await pollUntil(() => processesMatching(`sleep ${seconds}`).length > 0);
    assert.notDeepEqual(processesMatching(`sleep ${seconds}`), [], 'the container started');
    run.handle.stop();
    const result = await run.result;
    assert.deepEqual([result.status, result.snapshot.nodes[0]?.status], [RunStatus.Aborted, NodeStatus.Cancelled]);
    assert.deepEqual(processesMatching(`sleep ${seconds}`), []);

    const name = `trellis-exec-${process.pid}`;
    podman.service.podman(['run', '-d', '--name', name, podman.service.image, 'sleep', '600']);
    const inside = uniqueSleep();
    const child = uniqueSleep();
    // The command's shell starts a child and waits: the stop must reach the child too.
    const exec = startYaml(`steps:\n  - name: long\n    container: ${name}\n    command: sleep ${child} & sleep ${inside}; wait\n`, { hostEnv: hostEnv() });
    await pollUntil(() => processesMatching(`sleep ${inside}`).length > 0 && processesMatching(`sleep ${child}`).length > 0);
    exec.handle.stop();
    const stopped = await exec.result;
    assert.equal(stopped.status, RunStatus.Aborted);
    await pollUntil(() => processesMatching(`sleep ${inside}`).length === 0 && processesMatching(`sleep ${child}`).length === 0);
    assert.deepEqual(processesMatching(`sleep ${inside}`), [], 'the exec process is gone');
    assert.deepEqual(processesMatching(`sleep ${child}`), [], 'the child of the exec process is gone');
    podman.service.podman(['rm', '-f', '-t', '0', name]);
  });
});
