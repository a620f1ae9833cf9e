// A followed log that starts from its tail (`tail=N`): a long log's stream sends its last N lines
// and then the lines written live, not the whole log; Last-Event-ID still resumes where it says.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';
import { eventsUntilEnd, readEvents, streamEvents, type SseEvent } from './support/sse-events.js';

const LINES = 20_000;
const flagDir = mkdtempSync(join(tmpdir(), 'trellis-log-tail-'));
const GO = join(flagDir, 'go');
const DAGS = {
  // 20,000 lines, then two more once the test says so: the log grows while it is followed.
  tailed: `steps:\n  - name: count\n    command: seq 1 ${LINES}; while [ ! -f ${GO} ]; do sleep 0.1; done; echo live 1; echo live 2\n`,
};

let t: TestCoordinator;

before(async () => {
  t = await startTestCoordinator('logs_follow', DAGS);
});

after(async () => {
  await t.stop();
  rmSync(flagDir, { recursive: true, force: true });
});

const numbers = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `${from + i}\n`).join('');
const logEvents = (events: SseEvent[]) => events.filter((e) => e.event === 'log').map((e) => ({ id: e.id, ...(JSON.parse(e.data) as { attemptId: string; offset: number; content: string }) }));
const text = (events: SseEvent[]) => logEvents(events).map((e) => e.content).join('');

/** Polls the log's page until the step has written all its first lines. */
async function waitForLines(path: string, total: number): Promise<void> {
  for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 100))) {
    const page = (await t.call('GET', `${path}?tail=1`)).json;
    if (page.totalLines === total) return;
    if (Date.now() > deadline) throw new Error(`the log has ${String(page.totalLines)} lines, not ${total}`);
  }
}

describe('a followed log from its tail', () => {
  test('tail=5 sends the last 5 lines of a 20,000-line log, then the live ones (an empty log: one empty event); Last-Event-ID wins over tail; a bad tail is refused', async () => {
    assert.equal((await t.call('POST', '/dags/tailed/start', { dagRunId: 'tail-1' })).status, 200);
    await waitForLines('/dag-runs/tailed/tail-1/steps/count/log', LINES);
    const url = `${t.coordinator.apiUrl}/events/dag-runs/tailed/tail-1/steps/count/log`;
    const stream = streamEvents(`${url}?tail=5`);
    const first = (await stream.next()).value as SseEvent;
    const [tail] = logEvents([first]);
    const size = Buffer.byteLength(numbers(1, LINES));
    assert.deepEqual(tail, { id: `${tail?.attemptId ?? ''}:${size}`, attemptId: tail?.attemptId, offset: size, content: numbers(LINES - 4, LINES) });
    writeFileSync(GO, '');
    const rest = await eventsUntilEnd(stream);
    assert.equal(text(rest), 'live 1\nlive 2\n');
    assert.equal(rest.at(-1)?.event, 'end');
    // Resumed from the tail's id: only what came after; from the log's start: all of it, tail or not.
    assert.equal(text(await readEvents(`${url}?tail=5`, { 'last-event-id': tail?.id ?? '' })), 'live 1\nlive 2\n');
    assert.equal(text(await readEvents(`${url}?tail=5`, { 'last-event-id': `${tail?.attemptId ?? ''}:0` })), `${numbers(1, LINES)}live 1\nlive 2\n`);
    // An empty log's tail is an empty first event: the log as it is, nothing more to wait for.
    assert.deepEqual(logEvents(await readEvents(`${url}?stream=stderr&tail=5`)).map((e) => [e.offset, e.content]), [[0, '']]);
    // The run log's stream takes tail too: its last line alone.
    assert.match(text(await readEvents(`${t.coordinator.apiUrl}/events/dag-runs/tailed/tail-1/log?tail=1`)), /^[^\n]+\n?$/);
    for (const bad of ['0', '-1', '10001', 'abc', '2.5']) {
      for (const path of ['/events/dag-runs/tailed/tail-1/steps/count/log', '/events/dag-runs/tailed/tail-1/log']) {
        const res = await t.call('GET', `${path}?tail=${bad}`);
        assert.equal(res.status, 400, `tail=${bad} on ${path}`);
        assert.equal(res.json.code, 'bad_request');
        assert.match(String(res.json.message), /tail/);
      }
    }
  });
});
