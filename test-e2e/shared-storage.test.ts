// Coordinators that share nothing but PostgreSQL, as separate OS processes with their own data
// and DAG directories: DAG definitions written through one are read through the other within a
// second, a create race on one name has one winner, run logs (a multi-megabyte one too) page the
// same through both whichever coordinator received the chunks, and killing A (-9) mid-run and
// deleting its directories loses no line of the run's log and no DAG: B answers for all of it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { callAt, Cluster, waitFor, type Answer, type Peer } from './support/cluster.js';

const SUCCESS = 4;
const TERMINAL = new Set([2, 3, 4, 6, 8]);
/** The bound: a change made through one coordinator is seen by every other within 1 s. */
const PROPAGATION_MS = 1000;
/** 64-byte numbered lines: 60,000 of them are 3.84 MB. */
const BIG_LINES = 60_000;
/** Lines the step of the killed run prints, 100 every 0.2 s: about 6 s of output around the kill. */
const KILLED_RUN_LINES = 3000;
/** The contract's largest page. */
const MAX_LIMIT = 10_000;

const bigLine = (n: number): string => `${String(n).padStart(8, '0')} ${'0'.repeat(54)}`;
const numbered = (n: number): string => `line ${String(n).padStart(5, '0')}`;

const cluster = new Cluster({
  dags: {
    'on-a': 'worker_selector:\n  pool: a\nsteps:\n  - name: where\n    command: echo "ran on the worker of A"\n',
    'on-b': 'worker_selector:\n  pool: b\nsteps:\n  - name: where\n    command: echo "ran on the worker of B"\n',
    'big-log': `worker_selector:\n  pool: a\nsteps:\n  - name: flood\n    command: awk 'BEGIN { for (i = 1; i <= ${BIG_LINES}; i++) printf "%08d %054d\\n", i, 0 }'\n`,
    'steady': `worker_selector:\n  pool: both\nsteps:\n  - name: count\n    command: i=1; while [ $i -le ${KILLED_RUN_LINES} ]; do printf 'line %05d\\n' $i; if [ $((i % 100)) -eq 0 ]; then sleep 0.2; fi; i=$((i + 1)); done\n`,
  },
});
let b: Peer;

const onA = (method: string, path: string, body?: unknown): Promise<Answer> => cluster.call(method, path, body);
const onB = (method: string, path: string, body?: unknown): Promise<Answer> => callAt(b.api, method, path, body);
type Via = typeof onA;

const spec = (word: string): string => `description: ${word}\nsteps:\n  - name: s\n    command: echo ${word}\n`;

/** Polls `probe` until it holds and returns the time it took, failing past `PROPAGATION_MS`. */
async function seenWithin(what: string, probe: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - started;
    const elapsed = Date.now() - started;
    assert.ok(elapsed < PROPAGATION_MS, `${what}: not seen after ${elapsed} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function specOn(via: Via, name: string): Promise<string | undefined> {
  const answer = await via('GET', `/dags/${name}/spec`);
  return answer.status === 200 ? String(answer.json.spec) : undefined;
}

async function ended(via: Via, dag: string, id: string, timeoutMs = 60_000): Promise<number> {
  return waitFor(`${dag}/${id} to end`, async () => {
    const answer = await via('GET', `/dag-runs/${dag}/${id}`);
    const status = (answer.json.dagRun as { status?: number } | undefined)?.status;
    return status !== undefined && TERMINAL.has(status) ? status : undefined;
  }, timeoutMs);
}

interface LogPage {
  content: string;
  lineCount: number;
  totalLines: number;
  hasMore: boolean;
}

async function logPage(via: Via, path: string): Promise<LogPage> {
  const answer = await via('GET', path);
  assert.equal(answer.status, 200, `${path}: ${JSON.stringify(answer.json).slice(0, 300)}`);
  return answer.json as unknown as LogPage;
}

/** Every line of a log, read page by page by offset, each page checked against the total. */
async function wholeLog(via: Via, path: string, limit = MAX_LIMIT): Promise<string[]> {
  const lines: string[] = [];
  for (let offset = 1; ; offset += limit) {
    const page = await logPage(via, `${path}?offset=${offset}&limit=${limit}`);
    if (page.lineCount > 0) lines.push(...page.content.split('\n'));
    assert.equal(page.lineCount, Math.min(limit, Math.max(0, page.totalLines - offset + 1)));
    if (!page.hasMore) return lines;
  }
}

before(async () => {
  await cluster.start();
  b = await cluster.startPeerWithWorkers();
});

after(async () => {
  await cluster.stop();
});

describe('two coordinators sharing only PostgreSQL (separate processes, data and DAG directories)', () => {
  for (const [from, to, writer, reader] of [['A', 'B', onA, onB], ['B', 'A', onB, onA]] as const) {
    test(`a DAG created, updated, renamed and deleted through ${from} is read so through ${to} within 1 s`, async (t) => {
      const name = `made-on-${from.toLowerCase()}`;
      const renamed = `${name}-renamed`;
      const times: number[] = [];
      assert.equal((await writer('POST', '/dags', { name, spec: spec('first') })).status, 201);
      times.push(await seenWithin(`${to} reads the created DAG`, async () => (await specOn(reader, name)) === spec('first')));
      const updated = await writer('PUT', `/dags/${name}/spec`, { spec: spec('second') });
      assert.equal(updated.status, 200, JSON.stringify(updated.json));
      times.push(await seenWithin(`${to} reads the update`, async () => (await specOn(reader, name)) === spec('second')));
      assert.equal((await writer('POST', `/dags/${name}/rename`, { newFileName: renamed })).status, 200);
      times.push(await seenWithin(`${to} reads the rename`, async () => (await specOn(reader, renamed)) === spec('second') && (await reader('GET', `/dags/${name}`)).status === 404));
      const listed = (await reader('GET', '/dags?perPage=1000')).json.dags as Array<{ fileName: string }>;
      assert.ok(listed.some((d) => d.fileName === renamed) && !listed.some((d) => d.fileName === name), `${to}'s list follows the rename`);
      assert.equal((await writer('DELETE', `/dags/${renamed}`)).status, 204);
      times.push(await seenWithin(`${to} reads the delete`, async () => (await reader('GET', `/dags/${renamed}`)).status === 404));
      t.diagnostic(`create, update, rename, delete seen through ${to} after ${times.join(', ')} ms`);
    });
  }

  test('a simultaneous create of one DAG name through A and B: exactly one 201 and one 409, every time', async () => {
    for (let i = 0; i < 8; i += 1) {
      const name = `race-${i}`;
      const [a, bAnswer] = await Promise.all([onA('POST', '/dags', { name, spec: spec('from-a') }), onB('POST', '/dags', { name, spec: spec('from-b') })]);
      assert.deepEqual([a.status, bAnswer.status].sort(), [201, 409], `round ${i}: ${JSON.stringify([a.json, bAnswer.json])}`);
      const winner = a.status === 201 ? spec('from-a') : spec('from-b');
      // Both read the winner's spec: the loser's write left nothing behind.
      await seenWithin(`round ${i}: both read the winner`, async () => (await specOn(onA, name)) === winner && (await specOn(onB, name)) === winner);
    }
  });

  test('runs started through one coordinator and run by a worker reporting to the other: their logs read the same through both', async () => {
    assert.equal((await onB('POST', '/dags/on-a/start', { dagRunId: 'b-to-a' })).status, 200);
    assert.equal((await onA('POST', '/dags/on-b/start', { dagRunId: 'a-to-b' })).status, 200);
    for (const [dag, id, text] of [['on-a', 'b-to-a', 'ran on the worker of A'], ['on-b', 'a-to-b', 'ran on the worker of B']] as const) {
      assert.equal(await ended(onA, dag, id), SUCCESS);
      for (const via of [onA, onB]) {
        const step = await logPage(via, `/dag-runs/${dag}/${id}/steps/where/log`);
        assert.deepEqual([step.content, step.totalLines, step.hasMore], [text, 1, false]);
        const runLog = await logPage(via, `/dag-runs/${dag}/${id}/log?tail=100`);
        assert.ok(runLog.totalLines > 0 && runLog.content.length > 0, `${dag}/${id}: an empty run log`);
      }
      assert.equal((await logPage(onA, `/dag-runs/${dag}/${id}/log`)).content, (await logPage(onB, `/dag-runs/${dag}/${id}/log`)).content);
    }
  });

  test('a multi-megabyte step log reported to A pages by offset and by tail, the same through A and B', async (t) => {
    assert.equal((await onB('POST', '/dags/big-log/start', { dagRunId: 'big' })).status, 200);
    assert.equal(await ended(onB, 'big-log', 'big'), SUCCESS);
    const path = '/dag-runs/big-log/big/steps/flood/log';
    for (const via of [onA, onB]) {
      const started = Date.now();
      const lines = await wholeLog(via, path);
      assert.equal(lines.length, BIG_LINES);
      lines.forEach((line, i) => assert.equal(line, bigLine(i + 1), `line ${i + 1}`));
      t.diagnostic(`${BIG_LINES} lines (${(BIG_LINES * 64 / 1e6).toFixed(2)} MB) read in ${Math.ceil(BIG_LINES / MAX_LIMIT)} pages in ${Date.now() - started} ms`);
      const tail = await logPage(via, `${path}?tail=100`);
      assert.deepEqual([tail.lineCount, tail.totalLines, tail.hasMore], [100, BIG_LINES, true]);
      assert.deepEqual(tail.content.split('\n'), Array.from({ length: 100 }, (_, i) => bigLine(BIG_LINES - 99 + i)));
      const middle = await logPage(via, `${path}?offset=31337&limit=3`);
      assert.equal(middle.content, [31337, 31338, 31339].map(bigLine).join('\n'));
      const head = await logPage(via, `${path}?head=2`);
      assert.equal(head.content, [1, 2].map(bigLine).join('\n'));
    }
  });

  test('A killed (-9) mid-run and its data and DAG directories deleted: B reads the run\'s whole log (every line once, in order) and every DAG', async (t) => {
    const dags = ((await onA('GET', '/dags?perPage=1000')).json.dags as Array<{ fileName: string }>).map((d) => d.fileName).sort();
    assert.ok(dags.length >= 12, `DAGs before the kill: ${dags.join(', ')}`);
    assert.equal((await onB('POST', '/dags/steady/start', { dagRunId: 'through-the-kill' })).status, 200);
    const path = '/dag-runs/steady/through-the-kill/steps/count/log';
    const before = await waitFor('the first lines to reach A', async () => {
      const page = await logPage(onB, `${path}?tail=1`);
      return page.totalLines >= 300 ? page.totalLines : undefined;
    }, 30_000, 50);
    await cluster.killCoordinator();
    rmSync(join(cluster.dir, 'data'), { recursive: true, force: true });
    rmSync(join(cluster.dir, 'dags'), { recursive: true, force: true });
    t.diagnostic(`A killed with ${before} of ${KILLED_RUN_LINES} lines stored; its data and dags directories deleted`);
    assert.equal(await ended(onB, 'steady', 'through-the-kill'), SUCCESS);
    const expected = Array.from({ length: KILLED_RUN_LINES }, (_, i) => numbered(i + 1));
    assert.deepEqual(await wholeLog(onB, path, 250), expected);
    assert.deepEqual((await logPage(onB, `${path}?tail=${KILLED_RUN_LINES}`)).content.split('\n'), expected);
    const runLog = await logPage(onB, '/dag-runs/steady/through-the-kill/log?head=10000');
    assert.ok(runLog.totalLines > 0 && !runLog.hasMore);
    // Every DAG, from the database, as A listed it before it went away; B's own directory mirrors them.
    const afterKill = ((await onB('GET', '/dags?perPage=1000')).json.dags as Array<{ fileName: string }>).map((d) => d.fileName).sort();
    assert.deepEqual(afterKill, dags);
    for (const name of dags) assert.ok((await specOn(onB, name)) !== undefined, `B reads ${name}'s spec`);
    assert.deepEqual(readdirSync(join(b.dir, 'dags')).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -'.yaml'.length)).sort(), dags);
  });
});
