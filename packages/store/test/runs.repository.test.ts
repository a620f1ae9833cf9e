import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunStatus } from '@trellis/core';
import {
  failInterruptedRuns, getDagRunStates, getLatestRun, getNodes, getOutputs, getRun, getSpecYaml, insertRun, listRunSummaries, listRunSummaryJson, listRuns,
  purgeHistory, requeueForRetry, writeSnapshot, RunExistsError, RunSummaryCache, saveOutputs, setNodeData, setSuspended, specHash, updateRunStatus, InvalidCursorError,
  createStoredFile, insertProfile, profilesVersion, storedVersions, StaleDefinitionsError,
  type Db, type DefinitionVersions, type NewRun, type Queryable,
} from '@trellis/store';
import { openTestDb } from '@trellis/store/testing';

let db: Db;
let cleanup: () => Promise<void>;

before(async () => {
  ({ db, cleanup } = await openTestDb('runs_repository'));
});
after(async () => cleanup());

function newRun(overrides: Partial<NewRun> = {}): NewRun {
  return {
    dagName: 'etl', dagRunId: `r-${Math.random().toString(36).slice(2)}`, fileName: 'etl', attemptId: 'a1', status: RunStatus.Queued,
    params: '[]', queueName: 'etl', logFile: '/logs/x/run.log', specYaml: 'steps: [echo]', labels: ['team=data'], trigger: 'manual', triggeredBy: { kind: 'anonymous', id: 'anonymous', name: 'anonymous' }, noReuse: false,
    ...overrides,
  };
}

describe('runs repository', () => {
  test('insert records the run and its definition once per hash; a duplicate id is refused', async () => {
    const a = await insertRun(db, newRun({ dagRunId: 'dup' }));
    assert.equal(a.status, RunStatus.Queued);
    assert.ok(a.queuedAt instanceof Date);
    assert.equal(a.rootDagRunId, 'dup');
    await insertRun(db, newRun());
    assert.equal(await getSpecYaml(db, specHash('steps: [echo]')), 'steps: [echo]');
    const [{ n }] = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM dag_specs')) as [{ n: number }];
    assert.equal(n, 1);
    await assert.rejects(insertRun(db, newRun({ dagRunId: 'dup' })), RunExistsError);
    assert.equal((await getRun(db, 'etl', 'dup'))?.id, a.id);
  });

  test('a run inserted with its event records both in one statement; a refused duplicate records no event', async () => {
    const event = { kind: 'audit', type: 'run.started', dagName: 'etl', dagRunId: 'with-event', userId: 'u1', message: 'ann: started run with-event of etl', data: { trigger: 'manual' } };
    await insertRun(db, newRun({ dagRunId: 'with-event', event }));
    await assert.rejects(insertRun(db, newRun({ dagRunId: 'with-event', event })), RunExistsError);
    const events = await db.query<{ type: string; userId: string; message: string; data: unknown }>(
      `SELECT type, user_id AS "userId", message, data FROM event_logs WHERE kind = 'audit' AND dag_run_id = 'with-event'`,
    );
    assert.deepEqual(events, [{ type: 'run.started', userId: 'u1', message: 'ann: started run with-event of etl', data: { trigger: 'manual' } }]);
  });

  test('a run made from cached definitions is recorded only while their versions stand; otherwise nothing is written', async () => {
    const seen = async (): Promise<DefinitionVersions> => {
      const versions = await storedVersions(db, ['base', 'dag']);
      return { files: (['base', 'dag'] as const).map((kind) => ({ kind, version: versions.files.get(kind) ?? 0 })), profiles: await profilesVersion(db) };
    };
    const audit = (dagRunId: string) => ({ kind: 'audit', type: 'run.started', dagName: 'etl', dagRunId, message: 'started' });
    const count = async (sql: string, params: unknown[]): Promise<number> => ((await db.query<{ n: number }>(sql, params))[0] as { n: number }).n;
    const traces = async (dagRunId: string, yaml: string) => ({
      runs: await count('SELECT count(*)::int AS n FROM runs WHERE dag_run_id = $1', [dagRunId]),
      events: await count(`SELECT count(*)::int AS n FROM event_logs WHERE kind = 'audit' AND dag_run_id = $1`, [dagRunId]),
      specs: await count('SELECT count(*)::int AS n FROM dag_specs WHERE hash = $1', [specHash(yaml)]),
    });

    const current = await seen();
    const fresh = await insertRun(db, newRun({ dagRunId: 'as-cached', event: audit('as-cached'), expect: current }));
    assert.equal(fresh.dagRunId, 'as-cached');
    assert.equal('fresh' in fresh, false, 'the check leaves no field on the record');
    assert.deepEqual(await traces('as-cached', 'steps: [echo]'), { runs: 1, events: 1, specs: 1 });
    await assert.rejects(insertRun(db, newRun({ dagRunId: 'as-cached', expect: current })), RunExistsError, 'a taken id is still a taken id');

    // A definition written since (any kind the start names), then a profile change.
    await createStoredFile(db, 'dag', 'since', 'steps: [b]\n', { by: 'test', origin: 'elsewhere' });
    await assert.rejects(insertRun(db, newRun({ dagRunId: 'stale-file', specYaml: 'steps: [stale]', event: audit('stale-file'), expect: current })), StaleDefinitionsError);
    assert.deepEqual(await traces('stale-file', 'steps: [stale]'), { runs: 0, events: 0, specs: 0 });
    const afterFile = await seen();
    await insertProfile(db, { id: crypto.randomUUID(), name: `p-${Math.random().toString(36).slice(2)}`, description: '', protected: false, createdBy: 'test' });
    assert.ok((await profilesVersion(db)) > afterFile.profiles);
    await assert.rejects(insertRun(db, newRun({ dagRunId: 'stale-profile', expect: afterFile })), StaleDefinitionsError);
    assert.deepEqual(await traces('stale-profile', 'steps: [echo]'), { runs: 0, events: 0, specs: 1 });
    // A kind the start does not name moves without refusing it; versions read now pass.
    await createStoredFile(db, 'doc', 'notes', 'text', { by: 'test', origin: 'elsewhere' });
    await insertRun(db, newRun({ dagRunId: 'fresh-again', expect: await seen() }));
    assert.equal((await getRun(db, 'etl', 'fresh-again'))?.dagRunId, 'fresh-again');
  });

  test('run env: recorded with the run, empty by default, kept by a new attempt', async () => {
    const plain = await insertRun(db, newRun());
    assert.deepEqual(plain.runEnv, {});
    const child = await insertRun(db, newRun({ runEnv: { ITEM: 'a b "c"', OTHER: '' } }));
    assert.deepEqual(child.runEnv, { ITEM: 'a b "c"', OTHER: '' });
    assert.deepEqual((await getRun(db, child.dagName, child.dagRunId))?.runEnv, { ITEM: 'a b "c"', OTHER: '' });
    await updateRunStatus(db, { runId: child.id, attemptId: 'a1', expected: [RunStatus.Queued], next: RunStatus.Failed, finishedAt: new Date() });
    const retried = await requeueForRetry(db, child.id, { attemptId: 'a2', logFile: '/logs/x/2/run.log', triggeredBy: { kind: 'user', id: 'u1', name: 'ann' } });
    assert.deepEqual(retried?.runEnv, { ITEM: 'a b "c"', OTHER: '' });
  });

  test('triggeredBy: recorded with the run, without any other field; a new attempt names who retried it', async () => {
    const principal = { kind: 'apiKey', id: 'k1', name: 'ci', role: 'operator' };
    const run = await insertRun(db, newRun({ triggeredBy: principal }));
    assert.deepEqual(run.triggeredBy, { kind: 'apiKey', id: 'k1', name: 'ci' });
    await updateRunStatus(db, { runId: run.id, attemptId: 'a1', expected: [RunStatus.Queued], next: RunStatus.Failed, finishedAt: new Date() });
    const retried = await requeueForRetry(db, run.id, { attemptId: 'a2', logFile: '/logs/x/2/run.log', triggeredBy: { kind: 'user', id: 'u1', name: 'ann' } });
    assert.deepEqual(retried?.triggeredBy, { kind: 'user', id: 'u1', name: 'ann' });
    assert.deepEqual((await getRun(db, run.dagName, run.dagRunId))?.triggeredBy, { kind: 'user', id: 'u1', name: 'ann' });
  });

  test('compare-and-swap: stale attempts and backward moves change nothing', async () => {
    const run = await insertRun(db, newRun());
    assert.equal(await updateRunStatus(db, { runId: run.id, attemptId: 'a1', expected: [RunStatus.Queued], next: RunStatus.Running, startedAt: new Date(), workerId: 'local' }), true);
    assert.equal(await updateRunStatus(db, { runId: run.id, attemptId: 'other', expected: [RunStatus.Running], next: RunStatus.Success }), false);
    assert.equal(await updateRunStatus(db, { runId: run.id, attemptId: 'a1', expected: [RunStatus.Running], next: RunStatus.Success, finishedAt: new Date() }), true);
    assert.equal(await updateRunStatus(db, { runId: run.id, attemptId: 'a1', expected: [RunStatus.Running, RunStatus.Queued], next: RunStatus.Running }), false, 'a late Running report cannot reopen a finished run');
    const stored = await getRun(db, run.dagName, run.dagRunId);
    assert.equal(stored?.status, RunStatus.Success);
    assert.equal(stored?.workerId, 'local');
  });

  test('snapshots write status and nodes for the current attempt only; outputs round-trip', async () => {
    const run = await insertRun(db, newRun());
    const expected = [run.status];
    assert.equal(await writeSnapshot(db, { runId: run.id, attemptId: 'a1', expected, next: RunStatus.Running, nodes: [{ kind: 'step', position: 0, stepName: 's', data: { status: 1 } }] }), true);
    const nodes2 = [{ kind: 'step' as const, position: 0, stepName: 's', data: { status: 4 } }, { kind: 'handler' as const, position: 0, stepName: 'onExit', data: { status: 4 } }];
    assert.equal(await writeSnapshot(db, { runId: run.id, attemptId: 'a1', expected: [RunStatus.Running], next: RunStatus.Success, finishedAt: new Date(), nodes: nodes2 }), true);
    assert.equal(await writeSnapshot(db, { runId: run.id, attemptId: 'stale', expected: [RunStatus.Success], next: RunStatus.Failed, nodes: [] }), false);
    assert.equal(await writeSnapshot(db, { runId: run.id, attemptId: 'a1', expected: [RunStatus.Running], next: RunStatus.Failed, nodes: [] }), false, 'a late report cannot move a finished run');
    assert.equal((await getRun(db, run.dagName, run.dagRunId))?.status, RunStatus.Success);
    const nodes = await getNodes(db, run.id);
    assert.deepEqual(nodes.map((n) => [n.kind, n.stepName, n.data]), [['step', 's', { status: 4 }], ['handler', 'onExit', { status: 4 }]]);
    assert.equal(await setNodeData(db, run.id, 's', { status: 2 }), true);
    assert.equal(await setNodeData(db, run.id, 'missing', { status: 2 }), false);
    await saveOutputs(db, run.id, { status: 'succeeded' }, { answer: '42' });
    assert.deepEqual(await getOutputs(db, run.id), { metadata: { status: 'succeeded' }, outputs: { answer: '42' } });
  });

  test('a snapshot advances the report sequence in the same statement; one at or below it writes nothing', async () => {
    const run = await insertRun(db, newRun());
    const seqOf = async (): Promise<number | undefined> => (await getRun(db, run.dagName, run.dagRunId))?.reportSeq;
    assert.equal(await writeSnapshot(db, { runId: run.id, attemptId: 'a1', expected: [run.status], next: RunStatus.Running, nodes: [], reportSeq: 3 }), true);
    assert.equal(await seqOf(), 3);
    assert.equal(await writeSnapshot(db, { runId: run.id, attemptId: 'a1', expected: [RunStatus.Running], next: RunStatus.Success, nodes: [], reportSeq: 3 }), false, 'a resent snapshot writes nothing');
    assert.equal(await writeSnapshot(db, { runId: run.id, attemptId: 'a1', expected: [RunStatus.Running], next: RunStatus.Running, nodes: [], reportSeq: 2 }), false);
    assert.equal((await getRun(db, run.dagName, run.dagRunId))?.status, RunStatus.Running);
    assert.equal(await seqOf(), 3, 'never backwards');
    assert.equal(await writeSnapshot(db, { runId: run.id, attemptId: 'stale', expected: [RunStatus.Running], next: RunStatus.Success, nodes: [], reportSeq: 9 }), false);
    assert.equal(await seqOf(), 3, 'a stale attempt advances nothing');
    assert.equal(await writeSnapshot(db, { runId: run.id, attemptId: 'a1', expected: [RunStatus.Running], next: RunStatus.Success, nodes: [] }), true);
    assert.equal(await seqOf(), 3, 'a snapshot without a sequence leaves it');
  });

  test('listing: newest first, filters, forward-only cursor, latest per DAG', async () => {
    for (let i = 0; i < 25; i += 1) await insertRun(db, newRun({ dagName: 'paged', fileName: 'paged', dagRunId: `p${String(i).padStart(2, '0')}`, labels: i % 2 === 0 ? ['even'] : ['odd'] }));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listRuns(db, { name: 'paged', limit: 10, ...(cursor !== undefined ? { cursor } : {}) });
      seen.push(...page.runs.map((r) => r.dagRunId));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    assert.deepEqual(seen, Array.from({ length: 25 }, (_, i) => `p${String(24 - i).padStart(2, '0')}`));
    const even = await listRuns(db, { name: 'paged', labels: ['even'], limit: 100 });
    assert.equal(even.runs.length, 13);
    assert.equal(even.nextCursor, undefined);
    assert.equal((await listRuns(db, { dagRunId: 'p03', limit: 5 })).runs[0]?.dagRunId, 'p03');
    assert.equal((await listRuns(db, { name: 'paged', status: RunStatus.Success, limit: 5 })).runs.length, 0);
    assert.equal((await listRuns(db, { name: 'paged', from: new Date(Date.now() + 60_000), limit: 5 })).runs.length, 0);
    assert.equal((await getLatestRun(db, 'paged'))?.dagRunId, 'p24');
    const newest = await getRun(db, 'paged', 'p24');
    assert.ok(newest !== undefined);
    await updateRunStatus(db, { runId: newest.id, attemptId: newest.attemptId, expected: [newest.status], next: RunStatus.Success, startedAt: new Date(), finishedAt: new Date() });
    const [full, summaries] = [await listRuns(db, { name: 'paged', limit: 10 }), await listRunSummaries(db, { name: 'paged', limit: 10 })];
    const stamp = (d: Date | null): string => d?.toISOString() ?? '';
    assert.deepEqual(
      summaries.runs.map((r) => [r.id, r.dagRunId, r.status, r.queuedAt, r.startedAt, r.finishedAt, r.createdAt, r.triggeredBy]),
      full.runs.map((r) => [r.id, r.dagRunId, r.status, stamp(r.queuedAt), stamp(r.startedAt), stamp(r.finishedAt), r.createdAt.toISOString(), r.triggeredBy]),
      'summaries: the same runs, timestamps as toISOString writes them',
    );
    assert.equal(summaries.runs[0]?.finishedAt !== '', true);
    assert.equal(summaries.nextCursor, full.nextCursor, 'the same cursor');
    await setSuspended(db, 'none', true);
    const states = await getDagRunStates(db, new RunSummaryCache(), ['paged', 'none']);
    const pagedJson = await listRunSummaryJson(db, new RunSummaryCache(), { name: 'paged', limit: 10 });
    const listed = pagedJson.summaries.map((text) => JSON.parse(text) as Record<string, unknown>);
    assert.deepEqual(
      listed.map((r) => [r.dagRunId, r.status, r.statusLabel, r.queuedAt, r.startedAt, r.finishedAt, r.triggeredBy, r.conditions]),
      summaries.runs.map((r) => [r.dagRunId, r.status, r.status === RunStatus.Success ? 'succeeded' : 'queued', r.queuedAt, r.startedAt, r.finishedAt, r.triggeredBy, r.status === RunStatus.Queued ? [] : undefined]),
      'the JSON summaries: the same runs and values, conditions [] only while queued',
    );
    assert.equal(pagedJson.nextCursor, full.nextCursor, 'the same cursor');
    assert.equal(states.get('paged')?.suspended, false);
    assert.deepEqual(JSON.parse(states.get('paged')?.latestJson ?? 'null'), listed[0], 'the latest run, summarised alike');
    assert.deepEqual(states.get('none'), { latestJson: undefined, suspended: true });
    // Two definitions may share a DAG name: the name asked for twice answers alike.
    const twice = await getDagRunStates(db, new RunSummaryCache(), ['paged', 'none', 'paged']);
    assert.deepEqual([...twice.keys()].sort(), ['none', 'paged']);
    assert.deepEqual(twice.get('paged'), states.get('paged'));
    await assert.rejects(listRuns(db, { limit: 5, cursor: 'garbage' }), InvalidCursorError);
  });

  test('run summaries are built once per row version: a changed run is built again, a deleted one is left out', async () => {
    const cache = new RunSummaryCache(3);
    const runs = [];
    for (const id of ['k1', 'k2', 'k3']) runs.push(await insertRun(db, newRun({ dagName: 'kept', dagRunId: id })));
    const first = await listRunSummaryJson(db, cache, { name: 'kept', limit: 10 });
    assert.deepEqual(first.summaries.map((text) => (JSON.parse(text) as { dagRunId: string }).dagRunId), ['k3', 'k2', 'k1']);
    let statements = 0;
    const counting: Queryable = { query: (text, params) => ((statements += 1), db.query(text, params)) };
    const again = await listRunSummaryJson(counting, cache, { name: 'kept', limit: 10 });
    assert.ok(again.summaries.every((text, i) => text === first.summaries[i]) && again.summaries.length === 3, 'the same summaries');
    assert.equal(statements, 1, 'a page read again unchanged is its ids and versions only');
    const newest = runs[2];
    assert.ok(newest !== undefined);
    await updateRunStatus(db, { runId: newest.id, attemptId: newest.attemptId, expected: [RunStatus.Queued], next: RunStatus.Running, startedAt: new Date() });
    const changed = (await listRunSummaryJson(db, cache, { name: 'kept', limit: 10 })).summaries.map((text) => JSON.parse(text) as { dagRunId: string; status: number; startedAt?: string });
    assert.deepEqual([changed[0]?.dagRunId, changed[0]?.status, typeof changed[0]?.startedAt], ['k3', RunStatus.Running, 'string'], 'the changed run, not the one held');
    const latest = (await getDagRunStates(db, cache, ['kept'])).get('kept');
    assert.deepEqual(JSON.parse(latest?.latestJson ?? 'null'), changed[0], 'the DAG list shares the summaries');
    for (const id of ['k4', 'k5']) await insertRun(db, newRun({ dagName: 'kept', dagRunId: id }));
    await listRunSummaryJson(db, cache, { name: 'kept', limit: 10 });
    assert.equal(cache.size, 3, 'no more than its capacity');
    const gone = runs[0];
    assert.ok(gone !== undefined);
    await db.query('DELETE FROM runs WHERE id = $1', [gone.id]);
    assert.deepEqual(await cache.summaries(db, [{ id: String(gone.id), version: '1' }]), [undefined], 'a run deleted after the list read it');
  });

  test('interrupted runs of a worker are failed with the given error', async () => {
    const run = await insertRun(db, newRun({ dagName: 'crashy', status: RunStatus.Running }));
    await db.query("UPDATE runs SET worker_id = 'local' WHERE id = $1", [run.id]);
    const { failed } = await failInterruptedRuns(db, 'local', 'the coordinator stopped while the run was running');
    assert.ok(failed.some((f) => f.dagRunId === run.dagRunId));
    const after = await getRun(db, 'crashy', run.dagRunId);
    assert.equal(after?.status, RunStatus.Failed);
    assert.equal(after?.error, 'the coordinator stopped while the run was running');
  });

  test("an interrupted run's sub-DAG runs are taken off the queue or told to stop; other runs are left alone", async () => {
    const parent = await insertRun(db, newRun({ dagName: 'orphaner', status: RunStatus.Running }));
    await db.query("UPDATE runs SET worker_id = 'coord-1' WHERE id = $1", [parent.id]);
    const child = (name: string, status: RunStatus, parentDagRunId = parent.dagRunId) =>
      insertRun(db, newRun({ dagName: name, status, parentDagRunName: 'orphaner', parentDagRunId, dispatchTarget: 'remote' }));
    const queued = await child('c-queued', RunStatus.Queued);
    const handedOut = await child('c-handed-out', RunStatus.Running);
    const running = await child('c-running', RunStatus.Running);
    const finished = await child('c-finished', RunStatus.Success);
    const stranger = await child('c-stranger', RunStatus.Queued, 'another-parent');
    await db.query("UPDATE runs SET worker_id = 'w1', acked_at = now() WHERE id = $1", [running.id]);
    await db.query("UPDATE runs SET worker_id = 'w1' WHERE id = $1", [handedOut.id]);

    const result = await failInterruptedRuns(db, 'coord-1', 'the coordinator stopped');
    assert.deepEqual(result, { failed: [{ dagName: 'orphaner', dagRunId: parent.dagRunId }], childrenStopped: 3 });
    const now = async (r: { dagName: string; dagRunId: string }) => getRun(db, r.dagName, r.dagRunId);
    for (const aborted of [queued, handedOut]) {
      const row = await now(aborted);
      assert.equal(row?.status, RunStatus.Aborted, aborted.dagName);
      assert.equal(row?.error, `parent run orphaner/${parent.dagRunId} failed: the coordinator stopped`);
    }
    const flagged = await now(running);
    assert.equal(flagged?.status, RunStatus.Running, 'a child its worker runs ends when the worker is told to stop it');
    assert.ok(flagged?.stopRequestedAt instanceof Date);
    assert.equal((await now(finished))?.status, RunStatus.Success);
    assert.equal((await now(stranger))?.status, RunStatus.Queued);
    assert.deepEqual(await failInterruptedRuns(db, 'coord-1', 'again'), { failed: [], childrenStopped: 0 });
  });

  test('retention removes old finished runs only; negative keeps everything; 0 means 30 days', async () => {
    const old = await insertRun(db, newRun({ dagName: 'ret', logFile: '/logs/old/run.log', status: RunStatus.Success }));
    const oldRunning = await insertRun(db, newRun({ dagName: 'ret', status: RunStatus.Running }));
    const recent = await insertRun(db, newRun({ dagName: 'ret', status: RunStatus.Success }));
    await db.query("UPDATE runs SET created_at = now() - interval '40 days' WHERE id = ANY($1::bigint[])", [[old.id, oldRunning.id]]);
    assert.deepEqual(await purgeHistory(db, 'ret', -1, new Date()), []);
    assert.deepEqual(await purgeHistory(db, 'ret', 0, new Date()), ['/logs/old/run.log']);
    assert.equal(await getRun(db, 'ret', old.dagRunId), undefined);
    assert.ok(await getRun(db, 'ret', oldRunning.dagRunId), 'a running run is never purged');
    assert.ok(await getRun(db, 'ret', recent.dagRunId));
  });
});
