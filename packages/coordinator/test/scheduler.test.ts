import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { SchedulerClock } from '@trellis/coordinator';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

/** A clock the test moves by hand; the scheduler's own loop never fires during the test. */
class ManualClock implements SchedulerClock {
  constructor(public time: Date) {}
  now = (): Date => this.time;
  msUntil = (): number => 2_000_000_000;
}

const at = (iso: string) => new Date(iso);
const clock = new ManualClock(at('2026-11-23T11:59:30Z'));
let t: TestCoordinator;

const dags = {
  minutely: 'schedule: "* * * * *"\noverlap_policy: all\nsteps:\n  - "true"\n',
  oneoff: 'schedule:\n  - kind: at\n    at: "2026-11-23T12:02:30Z"\nsteps:\n  - sleep 0.3\n',
  guarded: 'schedule: "*/5 * * * *"\nskip_if_successful: true\nsteps:\n  - "true"\n',
  overlapping: 'schedule: "11-13 12 * * *"\nsteps:\n  - sleep 30\n',
  newest: 'schedule: "11-13 12 * * *"\noverlap_policy: latest\nqueue: one-slot\nsteps:\n  - sleep 30\n',
  catchup: 'schedule: "* * * * *"\ncatchup_window: 5m\noverlap_policy: all\nsteps:\n  - "true"\n',
  'queued-sched': 'schedule: "35 12 * * *"\nqueue: one-slot\nsteps:\n  - "true"\n',
  stopper: 'schedule:\n  start: "0 9 * * *"\n  stop: "0 17 * * *"\nsteps:\n  - sleep 60\n',
};

async function runIds(dag: string): Promise<string[]> {
  const { json } = await t.call('GET', `/dag-runs/${dag}?limit=500`);
  return (json.dagRuns as Array<{ dagRunId: string }>).map((r) => r.dagRunId).sort();
}

async function tick(iso: string) {
  clock.time = at(iso);
  return t.coordinator.scheduler.tick(at(iso));
}

async function waitStatus(dag: string, id: string, wanted: number[]): Promise<number> {
  for (let i = 0; i < 100; i += 1) {
    const { json } = await t.call('GET', `/dag-runs/${dag}/${id}`);
    const status = (json.dagRun as { status: number } | undefined)?.status ?? -1;
    if (wanted.includes(status)) return status;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${dag}/${id} never reached ${wanted.join('/')}`);
}

before(async () => {
  t = await startTestCoordinator('scheduler', dags, { queues: [{ name: 'one-slot', maxConcurrency: 1 }], timezone: 'UTC', schedulerLeaseTtlMs: 120_000 }, { schedulerClock: clock });
});
after(async () => t.stop());

describe('scheduler', () => {
  test('a tick starts each due run once, with a deterministic id; a repeated tick adds nothing', async () => {
    const first = await tick('2026-11-23T12:00:00Z');
    assert.ok(first?.started.includes('minutely/scheduled-20261123T120000Z'));
    assert.equal(await tick('2026-11-23T12:00:00Z'), undefined, 'the same minute is not ticked twice');
    await tick('2026-11-23T12:01:00Z');
    assert.deepEqual(await runIds('minutely'), ['scheduled-20261123T120000Z', 'scheduled-20261123T120100Z']);
    const run = (await t.call('GET', '/dag-runs/minutely/scheduled-20261123T120100Z')).json.dagRun as { status: number };
    assert.ok([1, 4, 5].includes(run.status));
  });

  test('a one-off fires at the first tick at or after its time, waits while the DAG is busy, and never fires again', async () => {
    const detail = (await t.call('GET', '/dags?name=oneoff')).json as { dags: Array<{ nextRun: string }> };
    assert.equal(detail.dags[0]?.nextRun, '2026-11-23T12:02:30.000Z');
    await t.call('POST', '/dags/oneoff/start', { dagRunId: 'manual-busy' });
    const busy = await tick('2026-11-23T12:03:00Z');
    assert.ok(busy?.skipped.some((s) => s.startsWith('oneoff/at-20261123T120230Z (pending')));
    const pending = (await t.call('GET', '/dags?name=oneoff')).json as { dags: Array<{ nextRun: string }> };
    assert.equal(pending.dags[0]?.nextRun, '2026-11-23T12:02:30.000Z', 'a pending one-off still shows as the next run');
    await waitStatus('oneoff', 'manual-busy', [4]);
    const fired = await tick('2026-11-23T12:04:00Z');
    assert.ok(fired?.started.includes('oneoff/at-20261123T120230Z'));
    await tick('2026-11-23T12:05:00Z');
    assert.deepEqual(await runIds('oneoff'), ['at-20261123T120230Z', 'manual-busy']);
    const after = (await t.call('GET', '/dags?name=oneoff')).json as { dags: Array<{ nextRun: string }> };
    assert.equal(after.dags[0]?.nextRun, '', 'a consumed one-off is gone');
  });

  test('skip_if_successful skips a time when a run succeeded since the previous scheduled time', async () => {
    await t.call('POST', '/dags/guarded/start', { dagRunId: 'manual-ok' });
    await waitStatus('guarded', 'manual-ok', [4]);
    const skipped = await tick('2026-11-23T12:10:00Z');
    assert.ok(skipped?.skipped.some((s) => s.startsWith('guarded/scheduled-20261123T121000Z (succeeded since')));
    assert.deepEqual(await runIds('guarded'), ['manual-ok', 'scheduled-20261123T120000Z']);
  });

  test('overlap_policy skip leaves out a time while a run is active; latest replaces the queued one', async () => {
    await tick('2026-11-23T12:11:00Z');
    await waitStatus('overlapping', 'scheduled-20261123T121100Z', [1]);
    const second = await tick('2026-11-23T12:12:00Z');
    assert.ok(second?.skipped.includes('overlapping/scheduled-20261123T121200Z (overlap_policy skip: a run is active)'));
    await waitStatus('newest', 'scheduled-20261123T121100Z', [1]);
    const superseded = (await t.call('GET', '/dag-runs/newest/scheduled-20261123T121200Z')).json.dagRun as { status: number };
    assert.equal(superseded.status, 5, 'queued behind the running one');
    await tick('2026-11-23T12:13:00Z');
    const replaced = (await t.call('GET', '/dag-runs/newest/scheduled-20261123T121200Z')).json.dagRun as { status: number; error: string };
    assert.deepEqual([replaced.status, replaced.error], [3, 'superseded by scheduled-20261123T121300Z (overlap_policy latest)']);
    for (const dag of ['overlapping', 'newest']) await t.call('POST', `/dags/${dag}/stop-all`);
  });

  test('after downtime, missed runs are replayed only within catchup_window; without the field only the current time runs', async () => {
    const outcome = await tick('2026-11-23T12:30:00Z');
    const catchup = (outcome?.started ?? []).filter((s) => s.startsWith('catchup/'));
    assert.deepEqual(catchup, ['catchup/scheduled-20261123T122600Z', 'catchup/scheduled-20261123T122700Z', 'catchup/scheduled-20261123T122800Z', 'catchup/scheduled-20261123T122900Z', 'catchup/scheduled-20261123T123000Z']);
    assert.ok(outcome?.started.includes('minutely/scheduled-20261123T123000Z'));
    assert.ok(!outcome?.started.includes('minutely/scheduled-20261123T122900Z'));
  });

  test('a suspended DAG is not scheduled and shows no next run', async () => {
    await t.call('POST', '/dags/minutely/suspend', { suspend: true });
    const list = (await t.call('GET', '/dags?name=minutely')).json as { dags: Array<{ nextRun: string; suspended: boolean }> };
    assert.deepEqual([list.dags[0]?.nextRun, list.dags[0]?.suspended], ['', true]);
    const outcome = await tick('2026-11-23T12:31:00Z');
    assert.ok(!outcome?.started.some((s) => s.startsWith('minutely/')));
    await t.call('POST', '/dags/minutely/suspend', { suspend: false });
    const back = (await t.call('GET', '/dags?name=minutely')).json as { dags: Array<{ nextRun: string }> };
    assert.equal(back.dags[0]?.nextRun, '2026-11-23T12:32:00.000Z');
  });

  test('the listed next run follows the clock: the same until the clock reaches it, an earlier one after the clock is set back', async () => {
    const nextOf = async (name: string): Promise<string | undefined> => ((await t.call('GET', `/dags?name=${name}`)).json as { dags: Array<{ nextRun: string }> }).dags[0]?.nextRun;
    const saved = clock.time;
    try {
      clock.time = at('2026-11-23T12:33:10Z');
      assert.equal(await nextOf('queued-sched'), '2026-11-23T12:35:00.000Z');
      clock.time = at('2026-11-23T12:34:59Z');
      assert.equal(await nextOf('queued-sched'), '2026-11-23T12:35:00.000Z');
      clock.time = at('2026-11-23T12:35:00Z');
      assert.equal(await nextOf('queued-sched'), '2026-11-24T12:35:00.000Z', 'a fire the clock reached is not next any more');
      clock.time = at('2026-11-23T12:20:00Z');
      assert.equal(await nextOf('queued-sched'), '2026-11-23T12:35:00.000Z', 'a clock set back has the earlier fire ahead again');
    } finally {
      clock.time = saved;
    }
  });

  test('pause: scheduled runs still queued are aborted, ticks start nothing, and nothing is replayed on resume', async () => {
    assert.deepEqual((await t.call('GET', '/services/scheduler/pause')).json, { paused: false });
    assert.equal((await t.call('POST', '/services/scheduler/pause', { paused: true, reason: 'x'.repeat(513) })).status, 400);
    assert.equal((await t.call('POST', '/services/scheduler/pause', {})).status, 400);
    await t.call('POST', '/dags/newest/enqueue', { dagRunId: 'manual-queued' });
    await t.call('POST', '/dags/newest/enqueue', { dagRunId: 'manual-queued-2' });
    await tick('2026-11-23T12:35:00Z');
    assert.equal(((await t.call('GET', '/dag-runs/queued-sched/scheduled-20261123T123500Z')).json.dagRun as { status: number }).status, 5);
    const paused = await t.call('POST', '/services/scheduler/pause', { paused: true, reason: 'maintenance' });
    assert.equal(paused.status, 200);
    const body = paused.json as { paused: boolean; pausedAt: string; pausedBy: string; reason: string };
    assert.deepEqual([body.paused, body.reason, body.pausedBy], [true, 'maintenance', 'anonymous']);
    assert.ok(!Number.isNaN(Date.parse(body.pausedAt)));
    assert.deepEqual((await t.call('GET', '/services/scheduler/pause')).json, body);
    const audit = (await t.call('GET', '/event-logs?kind=audit&type=scheduler.paused')).json.entries as Array<{ userId: string; message: string }>;
    assert.deepEqual(audit.map((e) => [e.userId, e.message]), [['anonymous', 'anonymous: paused the scheduler: maintenance']], 'who paused it is in the audit trail');
    for (const minute of ['40', '41', '42', '43', '44']) {
      const outcome = await tick(`2026-11-23T12:${minute}:00Z`);
      assert.deepEqual(outcome?.started, []);
    }
    const manual = (await t.call('GET', '/dag-runs/newest/manual-queued-2')).json.dagRun as { status: number };
    assert.equal(manual.status, 5, 'a manual run is not a scheduled one: it stays queued');
    const aborted = (await t.call('GET', '/dag-runs/queued-sched/scheduled-20261123T123500Z')).json.dagRun as { status: number; error: string };
    assert.deepEqual([aborted.status, aborted.error], [3, 'the scheduler was paused']);
    assert.equal((await t.call('POST', '/dags/minutely/start', { dagRunId: 'manual-while-paused' })).status, 200, 'manual runs still work while paused');
    await t.call('POST', '/services/scheduler/pause', { paused: false });
    const resumed = await tick('2026-11-23T12:45:00Z');
    assert.deepEqual(resumed?.started.filter((s) => s.startsWith('catchup/')), ['catchup/scheduled-20261123T124500Z'], 'the paused stretch is discarded');
  });

  test('stop schedules stop the running run at their time', async () => {
    await t.call('POST', '/dags/newest/stop-all');
    const started = await tick('2026-11-24T09:00:00Z');
    assert.ok(started?.started.includes('stopper/scheduled-20261124T090000Z'), JSON.stringify(started));
    await waitStatus('stopper', 'scheduled-20261124T090000Z', [1]);
    const outcome = await tick('2026-11-24T17:00:00Z');
    assert.deepEqual(outcome?.stopped, ['stopper/scheduled-20261124T090000Z']);
    assert.equal(await waitStatus('stopper', 'scheduled-20261124T090000Z', [3]), 3);
  });
});

describe('scheduler and daylight saving', () => {
  test('Berlin: a fixed-hour job runs once on both change days; a job stepped over hours follows real time', async () => {
    const dstClock = new ManualClock(at('2026-03-28T22:59:00Z'));
    const d = await startTestCoordinator('scheduler_dst', {
      berlin: 'schedule: "CRON_TZ=Europe/Berlin 30 2 * * *"\noverlap_policy: all\nsteps:\n  - "true"\n',
      halfhour: 'schedule: "CRON_TZ=Europe/Berlin */30 * * * *"\noverlap_policy: all\nsteps:\n  - "true"\n',
    }, { timezone: 'UTC', schedulerLeaseTtlMs: 120_000 }, { schedulerClock: dstClock });
    try {
      for (const [from, to] of [['2026-03-28T23:00:00Z', '2026-03-29T03:00:00Z'], ['2026-10-24T23:00:00Z', '2026-10-25T03:00:00Z']] as const) {
        for (let m = Date.parse(from); m <= Date.parse(to); m += 60_000) {
          dstClock.time = new Date(m);
          await d.coordinator.scheduler.tick(new Date(m));
        }
      }
      const ids = async (dag: string) => ((await d.call('GET', `/dag-runs/${dag}?limit=500`)).json.dagRuns as Array<{ dagRunId: string }>).map((r) => r.dagRunId).sort();
      // Spring forward (02:00 -> 03:00 CEST): 02:30 does not exist; it runs once, at 03:00 CEST = 01:00Z.
      // Fall back (03:00 -> 02:00 CET): 02:30 happens twice; it runs once, at the first, 00:30Z.
      assert.deepEqual(await ids('berlin'), ['scheduled-20260329T010000Z', 'scheduled-20261025T003000Z']);
      // */30 follows real time: 9 instants in each closed four-hour window, none skipped, none doubled.
      const half = await ids('halfhour');
      assert.equal(half.filter((id) => id.startsWith('scheduled-202603')).length, 9);
      assert.equal(half.filter((id) => id.startsWith('scheduled-202610')).length, 9);
    } finally {
      await d.stop();
    }
  });
});

describe('scheduler leadership', () => {
  test('a coordinator whose lease another holder took stops ticking at once', async () => {
    await t.coordinator.db.query("UPDATE scheduler_lease SET holder = 'another-coordinator', token = token + 1, expires_at = now() + interval '1 hour'");
    assert.equal(await tick('2026-11-25T10:00:00Z'), undefined);
    assert.deepEqual((await runIds('minutely')).filter((id) => id.includes('20261125')), []);
    const [state] = await t.coordinator.db.query<{ lastTick: Date }>('SELECT last_tick AS "lastTick" FROM scheduler_state');
    assert.equal(state?.lastTick.toISOString(), '2026-11-24T17:00:00.000Z', 'the fenced tick wrote nothing');
  });
});
