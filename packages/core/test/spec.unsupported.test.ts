import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadDag, parseBaseConfig, selectDag } from '@trellis/core';

const SSH_REFUSED = "ssh: running steps over SSH is not available in this build; remove it to run the steps on the worker's own host";
const CONTAINER_REFUSED = "container: running steps in a container is not available in this build; remove it to run the steps on the worker's own host";
const stepContainerRefused = (path: string): string =>
  `${path}.container: running a step in a container is not available in this build; remove it to run the step on the worker's own host`;

describe('placements this build cannot honour fail validation', () => {
  test('DAG-level ssh', () => {
    const result = loadDag('ssh:\n  host: build.internal\n  user: deploy\nsteps:\n  - uname -a\n');
    assert.equal(result.dag, undefined);
    assert.deepEqual(result.errors, [SSH_REFUSED]);
  });

  test('DAG-level container, exec form and image form', () => {
    const exec = loadDag('container: my-running-container\nsteps:\n  - echo hi\n');
    assert.deepEqual([exec.dag, exec.errors], [undefined, [CONTAINER_REFUSED]]);
    const image = loadDag('container:\n  image: alpine:3.19\n  pull_policy: missing\nsteps:\n  - echo hi\n');
    assert.deepEqual([image.dag, image.errors], [undefined, [CONTAINER_REFUSED]]);
  });

  test('step-level container, in steps and in handlers, names the step path', () => {
    const result = loadDag(`
steps:
  - echo first
  - name: in-box
    container: {image: python:3.12}
    command: python -V
handler_on:
  exit:
    container: sidecar
    command: echo bye
`);
    assert.equal(result.dag, undefined);
    assert.deepEqual(result.errors, [stepContainerRefused('handler_on.exit'), stepContainerRefused('steps[1]')]);
  });

  test('a local DAG with ssh is invalid and cannot be selected to run', () => {
    const yaml = 'steps:\n  - echo main\n---\nname: remote\nssh: {host: h}\nsteps:\n  - echo there\n';
    const result = loadDag(yaml, { fileName: 'main' });
    assert.deepEqual(result.localDags.map((l) => [l.name, l.dag, l.errors]), [['remote', undefined, [SSH_REFUSED]]]);
    const picked = selectDag('ssh: {host: h}\nsteps:\n  - echo there\n', 'remote', 'remote');
    assert.equal(picked.dag, undefined);
    assert.equal(picked.error, `the recorded definition is invalid: ${SSH_REFUSED}`);
  });

  test('a base configuration with ssh is refused', () => {
    assert.deepEqual(parseBaseConfig('ssh: {host: h}\n').errors, [SSH_REFUSED]);
  });
});
