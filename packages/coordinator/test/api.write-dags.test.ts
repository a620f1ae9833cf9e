// The server-level `writeDags` setting (the contract's `write_dags` permission) turned off:
// DAG and document writes and API pulls refused for every role, reads and runs untouched.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

describe('writeDags: false (the contract\'s server-level write_dags permission turned off)', () => {
  let locked: TestCoordinator;
  before(async () => {
    locked = await startTestCoordinator('api_docs_locked', { 'hand-made': 'steps:\n  - echo hi\n' }, { writeDags: false });
  });
  after(async () => {
    await locked.stop();
  });

  test('DAG and document writes and an API pull answer 403 for every role; reads and runs still work', async () => {
    const denied = [
      await locked.call('POST', '/docs', { id: 'notes', content: 'x' }),
      await locked.call('POST', '/dags', { name: 'fresh', spec: 'steps:\n  - echo hi\n' }),
      await locked.call('PUT', '/dags/hand-made/spec', { spec: 'steps:\n  - echo changed\n' }),
      await locked.call('DELETE', '/dags/hand-made'),
      await locked.call('POST', '/sync/pull'),
      await locked.call('POST', '/sync/publish-all', {}),
      await locked.call('POST', `/sync/items/${encodeURIComponent('hand-made')}/discard`),
      await locked.call('POST', '/sync/delete-missing', {}),
      await locked.call('POST', '/sync/cleanup'),
    ];
    for (const answer of denied) {
      assert.equal(answer.status, 403, JSON.stringify(answer.json));
      assert.equal(answer.json.code, 'forbidden');
      assert.match(String(answer.json.message), /writeDags: false/);
    }
    assert.equal((await locked.call('GET', '/docs?flat=true')).status, 200);
    assert.equal((await locked.call('GET', '/dags/hand-made/spec')).json.spec, 'steps:\n  - echo hi\n');
    const started = await locked.call('POST', '/dags/hand-made/start', { dagRunId: 'still-runs' });
    assert.equal(started.status, 200, JSON.stringify(started.json));
  });
});
