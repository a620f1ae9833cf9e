import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { createSilentLogger, purgeOldRuns } from '@trellis/coordinator';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

let t: TestCoordinator;
type Json = Record<string, unknown>;

const DAGS = {
  quick: 'steps:\n  - echo quick\n',
  slow: 'steps:\n  - sleep 20\n',
  parent: 'steps:\n  - {name: child, call: kid}\n---\nname: kid\nsteps:\n  - {name: k1, command: exit 1}\n',
};

async function finished(name: string, id: string, statuses = [2, 3, 4]): Promise<Json> {
  for (let i = 0; i < 400; i += 1) {
    const run = (await t.call('GET', `/dag-runs/${name}/${id}`)).json.dagRun as Json | undefined;
    if (run !== undefined && statuses.includes(run.status as number)) return run;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${name}/${id} did not finish`);
}

before(async () => {
  t = await startTestCoordinator('api_more', DAGS);
});
after(async () => t.stop());

describe('more run management', () => {
  test('suspend and resume a DAG; 404 for a missing one; suspend is required', async () => {
    assert.deepEqual((await t.call('POST', '/dags/quick/suspend', { suspend: true })).json, { suspended: true });
    assert.equal(((await t.call('GET', '/dags/quick')).json as { suspended: boolean }).suspended, true);
    const list = (await t.call('GET', '/dags?name=quick')).json.dags as Array<{ suspended: boolean }>;
    assert.equal(list[0]?.suspended, true);
    await t.call('POST', '/dags/quick/suspend', { suspend: false });
    assert.equal(((await t.call('GET', '/dags/quick')).json as { suspended: boolean }).suspended, false);
    assert.equal((await t.call('POST', '/dags/missing/suspend', { suspend: true })).status, 404);
    assert.equal((await t.call('POST', '/dags/quick/suspend', {})).status, 400);
  });

  test('reschedule queues a new run of the same definition; refused while the DAG is active', async () => {
    const id = (await t.call('POST', '/dags/quick/start', { dagRunId: 'orig' })).json.dagRunId as string;
    await finished('quick', id);
    const res = await t.call('POST', `/dag-runs/quick/${id}/reschedule`, { dagRunId: 'again' });
    assert.deepEqual(res.json, { dagRunId: 'again', queued: true });
    assert.equal((await finished('quick', 'again')).status, 4);
    const slow = (await t.call('POST', '/dags/slow/start', {})).json.dagRunId as string;
    await finished('slow', slow, [1]);
    const refused = await t.call('POST', `/dag-runs/slow/${slow}/reschedule`, {});
    assert.deepEqual([refused.status, refused.json.code], [409, 'max_run_reached']);
    await t.call('POST', `/dag-runs/slow/${slow}/stop`);
    await finished('slow', slow);
    assert.equal((await t.call('POST', '/dag-runs/quick/none/reschedule', {})).status, 404);
  });

  test('sub-DAG runs are recorded with parent ids; their steps can be set by hand', async () => {
    const id = (await t.call('POST', '/dags/parent/start', {})).json.dagRunId as string;
    const parent = await finished('parent', id);
    const node = (parent.nodes as Json[])[0] as { subRuns: Array<{ dagRunId: string }> };
    const childId = node.subRuns[0]?.dagRunId ?? '';
    const child = await finished('kid', childId);
    assert.equal(child.parentDAGRunId, id);
    assert.equal(child.rootDAGRunId, id);
    assert.equal((await t.call('PATCH', `/dag-runs/parent/${id}/sub-dag-runs/${childId}/steps/k1/status`, { status: 4 })).status, 200);
    assert.equal(((await finished('kid', childId)).nodes as Json[])[0]?.status, 4);
    assert.equal((await t.call('PATCH', `/dag-runs/parent/${id}/sub-dag-runs/nope/steps/k1/status`, { status: 4 })).status, 404);
  });

  test("history retention removes old finished runs and their log directories, every attempt's", async () => {
    const id = (await t.call('POST', '/dags/quick/start', {})).json.dagRunId as string;
    const first = await finished('quick', id);
    const firstDir = dirname(String(first.log));
    assert.equal((await t.call('POST', `/dag-runs/quick/${id}/retry`, {})).status, 200);
    let run = await finished('quick', id);
    while (run.attemptId === first.attemptId) run = await finished('quick', id);
    const logDir = dirname(String(run.log));
    assert.notEqual(logDir, firstDir);
    assert.ok(existsSync(logDir) && existsSync(firstDir));
    await t.coordinator.db.query("UPDATE runs SET created_at = now() - interval '40 days' WHERE dag_run_id = $1", [id]);
    const removed = await purgeOldRuns({ db: t.coordinator.db, logger: createSilentLogger(), retentionDays: () => 30 });
    assert.ok(removed >= 1);
    assert.equal((await t.call('GET', `/dag-runs/quick/${id}`)).status, 404);
    assert.equal(existsSync(logDir), false);
    assert.equal(existsSync(firstDir), false, "the first attempt's logs go with the run");
  });
});
