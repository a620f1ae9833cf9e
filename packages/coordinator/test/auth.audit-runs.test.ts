// Who started, stopped or retried each run, over real HTTP on PGlite or PostgreSQL: in builtin
// mode a user, an API key, a webhook and the scheduler each show on the run as `triggeredBy`
// and in a matching `kind=audit` event; sub-runs inherit their root's; retry re-triggers the run
// as the retrier; DAG changes are audited too. In mode none the actor is anonymous.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { SchedulerClock } from '@trellis/coordinator';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { bearer, callWith, type Answer } from './support/auth-fixtures.js';

type Json = Record<string, unknown>;
interface AuditEvent {
  type: string;
  userId: string;
  dagName: string;
  dagRunId: string;
  message: string;
  data: Json;
}

/** The scheduler's clock, moved by hand: its own loop never fires during the test. */
class ManualClock implements SchedulerClock {
  constructor(public time: Date) {}
  now = (): Date => this.time;
  msUntil = (): number => 2_000_000_000;
}

const PASSWORD = 'audit admin password';
const DAGS = {
  quick: 'steps:\n  - "true"\n',
  slow: 'steps:\n  - sleep 30\n',
  hooked: 'steps:\n  - "true"\n',
  nightly: 'schedule: "0 3 * * *"\nsteps:\n  - "true"\n',
  parent: 'steps:\n  - name: child\n    call: leaf\n---\nname: leaf\nsteps:\n  - "true"\n',
};
const clock = new ManualClock(new Date('2026-11-23T02:59:30Z'));

let t: TestCoordinator;
let admin = '';
let adminId = '';
let apiKey = '';
let apiKeyId = '';

const call = (method: string, path: string, authorization?: string, body?: unknown): Promise<Answer> => callWith(t.coordinator.apiUrl, method, path, authorization, body);

async function runOf(name: string, dagRunId: string): Promise<Json> {
  const res = await call('GET', `/dag-runs/${name}/${dagRunId}`, admin);
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return res.json.dagRun as Json;
}

async function waitFor(name: string, dagRunId: string, statuses: number[]): Promise<Json> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const run = await runOf(name, dagRunId);
    if (statuses.includes(run.status as number)) return run;
    if (Date.now() > deadline) throw new Error(`${name}/${dagRunId} never reached ${statuses.join('/')}: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function auditOf(dagRunId: string): Promise<AuditEvent[]> {
  const res = await call('GET', `/event-logs?kind=audit&dagRunId=${encodeURIComponent(dagRunId)}&limit=100`, admin);
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return (res.json.entries as AuditEvent[]).reverse();
}

/** The one audit event of this type for the run, naming the actor by id, kind and name. */
async function assertAudited(dagRunId: string, type: string, actor: { kind: string; id: string; name: string }): Promise<AuditEvent> {
  const events = (await auditOf(dagRunId)).filter((e) => e.type === type);
  assert.equal(events.length, 1, `one ${type} event for ${dagRunId}: ${JSON.stringify(events)}`);
  const [event] = events as [AuditEvent];
  assert.equal(event.userId, actor.id);
  assert.deepEqual(event.data.actor, actor);
  assert.ok(event.message.startsWith(`${actor.name}: `), event.message);
  return event;
}

before(async () => {
  t = await startTestCoordinator('auth_audit_runs', DAGS, { auth: { mode: 'builtin' } }, { schedulerClock: clock });
  const setup = await call('POST', '/auth/setup', undefined, { username: 'ada', password: PASSWORD });
  assert.equal(setup.status, 200, JSON.stringify(setup.json));
  admin = bearer(setup.json.token as string);
  adminId = (setup.json.user as Json).id as string;
  const key = await call('POST', '/api-keys', admin, { name: 'ci-robot', role: 'operator' });
  assert.equal(key.status, 201, JSON.stringify(key.json));
  apiKey = key.json.key as string;
  apiKeyId = (key.json.apiKey as Json).id as string;
});
after(async () => t.stop());

describe('runs name who triggered them (builtin auth)', () => {
  test('a user: triggeredBy and run.started name the user; the run list shows it too', async () => {
    const user = { kind: 'user', id: adminId, name: 'ada' };
    const res = await call('POST', '/dags/quick/start', admin, { dagRunId: 'by-user' });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const run = await waitFor('quick', 'by-user', [4]);
    assert.deepEqual(run.triggeredBy, user);
    const listed = await call('GET', '/dag-runs/quick', admin);
    assert.deepEqual((listed.json.dagRuns as Json[]).find((r) => r.dagRunId === 'by-user')?.triggeredBy, user);
    const event = await assertAudited('by-user', 'run.started', user);
    assert.equal(event.dagName, 'quick');
  });

  test('an API key: triggeredBy and run.enqueued name the key by id, never the key itself', async () => {
    const robot = { kind: 'apiKey', id: apiKeyId, name: 'ci-robot' };
    const res = await call('POST', '/dags/quick/enqueue', bearer(apiKey), { dagRunId: 'by-key' });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.deepEqual((await waitFor('quick', 'by-key', [4])).triggeredBy, robot);
    await assertAudited('by-key', 'run.enqueued', robot);
    const inline = await call('POST', '/dag-runs', admin, { spec: 'steps:\n  - "true"\n', name: 'adhoc', dagRunId: 'inline-by-user' });
    assert.equal(inline.status, 200, JSON.stringify(inline.json));
    assert.deepEqual((await waitFor('adhoc', 'inline-by-user', [4])).triggeredBy, { kind: 'user', id: adminId, name: 'ada' });
  });

  test('a webhook: triggeredBy and webhook.triggered name the webhook by id', async () => {
    const made = await call('POST', '/dags/hooked/webhook', admin, {});
    assert.equal(made.status, 201, JSON.stringify(made.json));
    const hookId = (made.json.webhook as Json).id as string;
    const res = await call('POST', '/webhooks/hooked', bearer(made.json.token as string), { dagRunId: 'by-hook', payload: { ref: 'main' } });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const hook = { kind: 'webhook', id: hookId, name: 'hooked' };
    assert.deepEqual((await waitFor('hooked', 'by-hook', [4])).triggeredBy, hook);
    await assertAudited('by-hook', 'webhook.triggered', hook);
  });

  test('the scheduler: triggeredBy and run.started say scheduler', async () => {
    clock.time = new Date('2026-11-23T03:00:00Z');
    const outcome = await t.coordinator.scheduler.tick(clock.time);
    const id = 'scheduled-20261123T030000Z';
    assert.ok(outcome?.started.includes(`nightly/${id}`), JSON.stringify(outcome));
    const scheduler = { kind: 'scheduler', id: 'scheduler', name: 'scheduler' };
    assert.deepEqual((await waitFor('nightly', id, [4])).triggeredBy, scheduler);
    await assertAudited(id, 'run.started', scheduler);
  });

  test('a sub-run inherits its root run trigger and is no audit event of its own', async () => {
    const robot = { kind: 'apiKey', id: apiKeyId, name: 'ci-robot' };
    assert.equal((await call('POST', '/dags/parent/start', bearer(apiKey), { dagRunId: 'root-by-key' })).status, 200);
    await waitFor('parent', 'root-by-key', [4]);
    const [child] = await t.coordinator.db.query<{ dagName: string; dagRunId: string }>(
      'SELECT dag_name AS "dagName", dag_run_id AS "dagRunId" FROM runs WHERE parent_dag_run_id = $1',
      ['root-by-key'],
    );
    assert.ok(child, 'the sub-run exists');
    const sub = await runOf(child.dagName, child.dagRunId);
    assert.equal(sub.rootDAGRunId, 'root-by-key');
    assert.deepEqual(sub.triggeredBy, robot);
    assert.deepEqual(await auditOf(child.dagRunId), []);
  });

  test('stop: run.stopped names the stopper; the run still names who started it', async () => {
    assert.equal((await call('POST', '/dags/slow/start', bearer(apiKey), { dagRunId: 'to-stop' })).status, 200);
    await waitFor('slow', 'to-stop', [1]);
    const stop = await call('POST', '/dag-runs/slow/to-stop/stop', admin);
    assert.equal(stop.status, 200, JSON.stringify(stop.json));
    const run = await waitFor('slow', 'to-stop', [3]);
    assert.deepEqual(run.triggeredBy, { kind: 'apiKey', id: apiKeyId, name: 'ci-robot' });
    await assertAudited('to-stop', 'run.stopped', { kind: 'user', id: adminId, name: 'ada' });
    await assertAudited('to-stop', 'run.started', { kind: 'apiKey', id: apiKeyId, name: 'ci-robot' });
  });

  test('retry: a new attempt is triggeredBy the retrier; a retry under a new id too; both are run.retried', async () => {
    const robot = { kind: 'apiKey', id: apiKeyId, name: 'ci-robot' };
    const again = await call('POST', '/dag-runs/quick/by-user/retry', bearer(apiKey), {});
    assert.equal(again.status, 200, JSON.stringify(again.json));
    const retried = await waitFor('quick', 'by-user', [4]);
    assert.deepEqual(retried.triggeredBy, robot);
    const inPlace = await assertAudited('by-user', 'run.retried', robot);
    assert.equal(inPlace.data.attempt, 2);
    const copy = await call('POST', '/dag-runs/quick/by-key/retry', admin, { dagRunId: 'retry-copy' });
    assert.equal(copy.status, 200, JSON.stringify(copy.json));
    assert.deepEqual((await waitFor('quick', 'retry-copy', [4])).triggeredBy, { kind: 'user', id: adminId, name: 'ada' });
    const event = await assertAudited('retry-copy', 'run.retried', { kind: 'user', id: adminId, name: 'ada' });
    assert.equal(event.data.retryOf, 'by-key');
  });

  test('reschedule, dequeue and a step status set by hand are audited with their actor', async () => {
    const res = await call('POST', '/dag-runs/quick/by-key/reschedule', bearer(apiKey), { dagRunId: 'rescheduled' });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.deepEqual((await waitFor('quick', 'rescheduled', [4])).triggeredBy, { kind: 'apiKey', id: apiKeyId, name: 'ci-robot' });
    await assertAudited('rescheduled', 'run.rescheduled', { kind: 'apiKey', id: apiKeyId, name: 'ci-robot' });
    const [node] = (await runOf('quick', 'rescheduled')).nodes as Array<{ step: { name: string } }>;
    const step = await call('PATCH', `/dag-runs/quick/rescheduled/steps/${encodeURIComponent(node?.step.name ?? '')}/status`, admin, { status: 2 });
    assert.equal(step.status, 200, JSON.stringify(step.json));
    const set = await assertAudited('rescheduled', 'run.step.status_set', { kind: 'user', id: adminId, name: 'ada' });
    assert.equal(set.data.status, 2);
    // Two runs of `slow`: the second waits in the DAG's one-slot queue until dequeued.
    assert.equal((await call('POST', '/dags/slow/start', admin, { dagRunId: 'slow-1' })).status, 200);
    await waitFor('slow', 'slow-1', [1]);
    assert.equal((await call('POST', '/dags/slow/enqueue', admin, { dagRunId: 'slow-2' })).status, 200);
    assert.equal((await waitFor('slow', 'slow-2', [5])).status, 5);
    assert.equal((await call('GET', '/dag-runs/slow/slow-2/dequeue', bearer(apiKey))).status, 200);
    await assertAudited('slow-2', 'run.dequeued', { kind: 'apiKey', id: apiKeyId, name: 'ci-robot' });
    assert.equal((await call('POST', '/dags/slow/stop-all', admin)).status, 200);
    const stopped = await assertAudited('slow-1', 'run.stopped', { kind: 'user', id: adminId, name: 'ada' });
    assert.equal(stopped.data.stopAll, true);
  });

  test('DAG create, update, rename, suspend and delete are audited with their actor; no credential in any event', async () => {
    const dev = { kind: 'user', id: adminId, name: 'ada' };
    assert.equal((await call('POST', '/dags', admin, { name: 'fresh' })).status, 201);
    assert.equal((await call('PUT', '/dags/fresh/spec', bearer(apiKey), { spec: 'steps:\n  - echo new\n' })).status, 403, 'operators cannot write DAGs');
    assert.equal((await call('PUT', '/dags/fresh/spec', admin, { spec: 'steps:\n  - echo new\n' })).status, 200);
    assert.equal((await call('POST', '/dags/fresh/suspend', bearer(apiKey), { suspend: true })).status, 200);
    assert.equal((await call('POST', '/dags/fresh/suspend', bearer(apiKey), { suspend: false })).status, 200);
    assert.equal((await call('POST', '/dags/fresh/rename', admin, { newFileName: 'renamed' })).status, 200);
    assert.equal((await call('DELETE', '/dags/renamed', admin)).status, 204);
    const res = await call('GET', '/event-logs?kind=audit&dagName=fresh&limit=100', admin);
    const byType = new Map((res.json.entries as AuditEvent[]).map((e) => [e.type, e]));
    for (const type of ['dag.created', 'dag.updated', 'dag.renamed']) assert.deepEqual(byType.get(type)?.data.actor, dev, type);
    for (const type of ['dag.suspended', 'dag.resumed']) assert.equal(byType.get(type)?.userId, apiKeyId, type);
    assert.equal(byType.get('dag.renamed')?.data.newFileName, 'renamed');
    const deleted = await call('GET', '/event-logs?kind=audit&type=dag.deleted&dagName=renamed', admin);
    assert.equal((deleted.json.entries as AuditEvent[])[0]?.userId, adminId);
    const all = JSON.stringify((await call('GET', '/event-logs?kind=audit&limit=500', admin)).json);
    for (const secret of [PASSWORD, apiKey, admin.slice(7)]) assert.equal(all.includes(secret), false, 'no credential in the audit trail');
    assert.doesNotMatch(all, /svc_wh_[0-9a-f]{20}/);
  });
});

describe('runs name who triggered them (auth none)', () => {
  test('the actor is anonymous, on the run and in the audit event', async () => {
    const open = await startTestCoordinator('auth_audit_runs_none', { quick: DAGS.quick });
    try {
      assert.equal((await open.call('POST', '/dags/quick/start', { dagRunId: 'anon' })).status, 200);
      const run = await open.waitForRunStatus('quick', 'anon', [4]);
      const anonymous = { kind: 'anonymous', id: 'anonymous', name: 'anonymous' };
      assert.deepEqual(run.triggeredBy, anonymous);
      assert.equal((await open.call('POST', '/dag-runs/quick/anon/retry', {})).status, 200);
      assert.deepEqual((await open.waitForRunStatus('quick', 'anon', [4])).triggeredBy, anonymous);
      const res = await open.call('GET', '/event-logs?kind=audit&dagRunId=anon&limit=10');
      const events = res.json.entries as AuditEvent[];
      assert.deepEqual(events.map((e) => e.type).sort(), ['run.retried', 'run.started']);
      for (const event of events) assert.deepEqual([event.userId, event.data.actor], ['anonymous', anonymous]);
    } finally {
      await open.stop();
    }
  });
});
