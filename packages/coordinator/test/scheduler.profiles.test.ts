// Schedule entries that name a runtime profile, on PGlite or PostgreSQL: active only when that
// is the DAG's effective default profile (configuration `defaultProfile`), unscoped entries
// always; scheduled and manual runs without a profile use the default one; a scheduled run
// whose profile cannot be used is not refused but fails with the reason.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { SchedulerClock } from '@trellis/coordinator';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

class ManualClock implements SchedulerClock {
  constructor(public time: Date) {}
  now = (): Date => this.time;
  msUntil = (): number => 2_000_000_000;
}

const clock = new ManualClock(new Date('2026-11-23T11:59:30Z'));
const DAGS = {
  scoped: [
    'schedule:',
    '  start:',
    '    - cron: "1 12 * * *"',
    '      profile: staging',
    '    - cron: "2 12 * * *"',
    '      profile: production',
    '    - "3 12 * * *"',
    'steps:',
    '  - name: show',
    '    command: echo "stage=$STAGE"',
  ].join('\n'),
};
let t: TestCoordinator;

async function tick(iso: string) {
  clock.time = new Date(iso);
  return t.coordinator.scheduler.tick(new Date(iso));
}

before(async () => {
  t = await startTestCoordinator('scheduler_profiles', DAGS, { defaultProfile: 'staging', secretsKey: randomBytes(32).toString('base64'), timezone: 'UTC', schedulerLeaseTtlMs: 120_000 }, { schedulerClock: clock });
  for (const name of ['staging', 'production']) {
    assert.equal((await t.call('POST', '/profiles', { name })).status, 201);
    assert.equal((await t.call('PUT', `/profiles/${name}/variables/STAGE`, { value: name })).status, 200);
  }
});
after(async () => t.stop());

describe('schedule entries with profiles', () => {
  test('only entries naming the default profile, and unscoped ones, start runs; the runs use the default profile', async () => {
    const dag = (await t.call('GET', '/dags/scoped')).json.dag as Record<string, unknown> | undefined;
    assert.ok(dag);
    assert.deepEqual((await tick('2026-11-23T12:01:00Z'))?.started, ['scoped/scheduled-20261123T120100Z']);
    assert.deepEqual((await tick('2026-11-23T12:02:00Z'))?.started, [], 'the production entry is not active here');
    const first = await t.waitForRunStatus('scoped', 'scheduled-20261123T120100Z', [2, 4]);
    assert.deepEqual([first.status, first.profileName], [4, 'staging']);
    const log = (await t.call('GET', '/dag-runs/scoped/scheduled-20261123T120100Z/steps/show/log')).json.content;
    assert.match(String(log), /stage=staging/);
    const manual = await t.call('POST', '/dags/scoped/start', {});
    assert.equal((await t.waitForRunStatus('scoped', String(manual.json.dagRunId), [2, 4])).profileName, 'staging', 'a start naming no profile uses the default');
    const chosen = await t.call('POST', '/dags/scoped/start', { profileName: 'production' });
    assert.equal((await t.waitForRunStatus('scoped', String(chosen.json.dagRunId), [2, 4])).profileName, 'production');
  });

  test('the default profile disabled: a scheduled run is still made, and fails saying why', async () => {
    assert.equal((await t.call('PATCH', '/profiles/staging', { status: 'disabled' })).status, 200);
    assert.deepEqual((await tick('2026-11-23T12:03:00Z'))?.started, ['scoped/scheduled-20261123T120300Z']);
    const run = await t.waitForRunStatus('scoped', 'scheduled-20261123T120300Z', [2, 4]);
    assert.equal(run.status, 2);
    assert.match(String(run.error), /^cannot start: runtime profile staging: profile staging is disabled/);
    const refused = await t.call('POST', '/dags/scoped/start', {});
    assert.deepEqual([refused.status, refused.json.code], [400, 'bad_request'], 'a manual start is refused at once');
  });
});
