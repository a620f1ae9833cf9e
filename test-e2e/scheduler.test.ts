// Two coordinators on one PostgreSQL database schedule a DAG every minute on a clock sped up
// 60 times (a minute a second). The leader is killed in the middle; the standby takes the
// lease and catches up from the recorded last tick. Every minute gets exactly one run.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, freePort, stopProcess, waitFor, type Proc } from './support/cluster.js';

const anchor = new Date().toISOString();
const cluster = new Cluster({
  dags: { ticker: 'schedule: "* * * * *"\ncatchup_window: 10m\noverlap_policy: all\nsteps:\n  - "true"\n' },
  config: `schedulerClockSpeed: 60\nschedulerClockAnchor: "${anchor}"\nschedulerLeaseTtlMs: 3000\n`,
});
let second: Proc | undefined;

function leaderOf(procs: Proc[]): Proc | undefined {
  return procs.find((p) => p.output().includes('scheduler leadership taken'));
}

before(async () => {
  await cluster.start();
  second = await cluster.startCoordinatorProcess(await freePort(), await freePort());
});

after(async () => {
  if (second !== undefined) await stopProcess(second);
  await cluster.stop();
});

async function scheduledMinutes(): Promise<number[]> {
  const rows = await cluster.sql<{ id: string }>("SELECT dag_run_id AS id FROM runs WHERE dag_name = 'ticker' AND trigger = 'schedule' ORDER BY dag_run_id");
  return rows.map((r) => {
    const m = /^scheduled-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})00Z$/.exec(r.id);
    assert.ok(m, `run id ${r.id}`);
    return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5])) / 60_000;
  });
}

describe('scheduler across two coordinators', () => {
  test('over 30+ ticks with the leader killed midway: exactly one run per minute, none missing, none doubled', async () => {
    const first = cluster.coordinator;
    assert.ok(first !== undefined && second !== undefined);
    const leader = await waitFor('a leader', () => Promise.resolve(leaderOf([first, second as Proc])), 15_000);
    const standby = leader === first ? second : first;
    await waitFor('15 scheduled runs', async () => ((await scheduledMinutes()).length >= 15 ? true : undefined), 60_000);
    await stopProcess(leader, 'SIGKILL');
    await waitFor('the standby to lead', () => Promise.resolve(standby.output().includes('scheduler leadership taken') ? true : undefined), 20_000);
    await waitFor('35 scheduled runs', async () => ((await scheduledMinutes()).length >= 35 ? true : undefined), 90_000);
    const minutes = await scheduledMinutes();
    assert.equal(new Set(minutes).size, minutes.length, 'no minute twice');
    const firstMinute = minutes[0] ?? 0;
    const lastMinute = minutes.at(-1) ?? 0;
    assert.equal(minutes.length, lastMinute - firstMinute + 1, `every minute from the first to the last has its run (${minutes.length} runs)`);
  });
});
