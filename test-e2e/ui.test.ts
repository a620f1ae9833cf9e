// The web UI in Chromium against a real coordinator process (and a worker daemon): the issue's
// scenarios end to end, live updates included, and axe-core on every page visited.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Cluster, waitFor } from './support/cluster.js';
import { assertAccessible, launchChromium, readmeScreenshot, withScreenshotOnFailure } from './support/browser.js';
import { startGitHttpRemote } from '../packages/coordinator/test/support/git-http-server.js';

const cluster = new Cluster({
  // The sync token is sealed with it.
  config: `secretsKey: ${randomBytes(32).toString('base64')}\n`,
  dags: {
    long: 'steps:\n  - name: nap\n    command: sleep 120\n',
    // Eight lines hold the word the search test looks for: three in the preview, the rest on request.
    haystack: `steps:\n${Array.from({ length: 8 }, (_, i) => `  - name: s${i + 1}\n    command: echo needle ${i + 1}\n`).join('')}`,
    stepwise: 'steps:\n  - name: first\n    command: sleep 3\n  - name: second\n    command: sleep 3\n  - name: third\n    command: sleep 2\n',
    // Named apart from its file: the run page must still link the DAG's file.
    gated: 'name: release\nsteps:\n  - name: gate\n    command: echo ready\n    approval:\n      prompt: Ship it?\n      input: [TICKET, NOTE]\n      required: [TICKET]\n  - name: ship\n    command: echo "shipped $TICKET"\n',
    // A step that writes a line a second: its log grows while the test watches.
    ticker: 'steps:\n  - name: count\n    command: for i in 1 2 3 4 5 6 7 8; do echo "tick $i"; sleep 1; done\n',
    'on-gpu': 'worker_selector:\n  gpu: "true"\nsteps:\n  - name: render\n    command: echo gpu\n',
  },
});

// Line 8 holds the unknown field the validation must point at.
const BROKEN = 'params:\n  - WHO: nobody\nsteps:\n  - name: greet\n    command: echo "hello ${WHO}"\n  - name: settle\n    command: sleep 1\n    bogus: 1\n';
const FIXED = 'params:\n  - WHO: nobody\nsteps:\n  - name: greet\n    command: echo "hello ${WHO}"\n  - name: settle\n    command: sleep 1\n';

let browser: Browser;
let context: BrowserContext;
let page: Page;

const url = (path: string) => `http://127.0.0.1:${cluster.httpPort}${path}`;


/** Replaces the editor's whole text, as a user pasting a spec would. */
async function replaceSpec(text: string): Promise<void> {
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(text);
}

async function startRun(dag: string): Promise<string> {
  const { status, json } = await cluster.call('POST', `/dags/${dag}/start`, {});
  assert.equal(status, 200, JSON.stringify(json));
  return json.dagRunId as string;
}

before(async () => {
  await cluster.start();
  cluster.startWorker('ui-worker', 'pool=ui,zone=test');
  await cluster.workerReady('ui-worker');
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, timezoneId: 'Europe/Berlin' });
  context.setDefaultTimeout(15_000);
  page = await context.newPage();
});

after(async () => {
  await browser?.close();
  await cluster.stop();
});

describe('the web UI', () => {
  test('a deep link loads on reload, under the API base as well as the UI', async () => {
    await withScreenshotOnFailure(page, 'deep-link', async () => {
      await page.goto(url('/runs?status=4'));
      await page.getByRole('heading', { name: 'Runs' }).waitFor();
      const api = await fetch(url('/api/v1/no-such-route'));
      assert.equal(api.status, 404);
      assert.equal(((await api.json()) as { code: string }).code, 'not_found');
    });
  });

  test('create a DAG in the editor: a validation error at its line, fixed, saved', async () => {
    await withScreenshotOnFailure(page, 'editor', async () => {
      await page.goto(url('/'));
      await page.getByLabel('New DAG file name').fill('greeter');
      await page.getByRole('button', { name: 'New DAG' }).click();
      await page.waitForURL(/\/dags\/greeter\?tab=spec/);
      await page.locator('.cm-content').waitFor();
      await replaceSpec(BROKEN);
      const validation = page.getByTestId('validation');
      await validation.filter({ hasText: 'line 8: steps[1].bogus' }).waitFor();
      // The gutter marks that very line.
      const marked = await page.evaluate(() => {
        const marker = document.querySelector('.cm-lint-marker-error');
        const gutter = marker?.closest('.cm-gutterElement') as HTMLElement | null;
        const lines = [...document.querySelectorAll('.cm-lineNumbers .cm-gutterElement')] as HTMLElement[];
        return lines.find((l) => gutter !== null && l.offsetTop === gutter.offsetTop)?.textContent;
      });
      assert.equal(marked, '8');
      await assertAccessible(page, 'the spec editor with an error');
      await replaceSpec(FIXED);
      await validation.filter({ hasText: /^valid$/ }).waitFor();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Saved.').waitFor();
      await readmeScreenshot(page, 'dag-editor');
    });
  });

  test('start it with params and watch its nodes turn green live; find the step output in its log', async () => {
    await withScreenshotOnFailure(page, 'start-with-params', async () => {
      await page.getByRole('button', { name: 'Start…' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('WHO').fill('trellis-ui');
      await dialog.getByRole('button', { name: 'Start run' }).click();
      await page.waitForURL(/\/runs\/greeter\//);
      // Live: the page was open before the run ended; the graph turns green with no reload.
      await page.locator('g.node[data-step="greet"][data-status="succeeded"]').waitFor();
      await page.locator('g.node[data-step="settle"][data-status="succeeded"]').waitFor();
      assert.equal(await page.locator('polyline.edge').count(), 1, 'greet -> settle, the chain');
      await page.getByTestId('run-status').filter({ hasText: 'succeeded' }).waitFor();
      await assertAccessible(page, 'the run page');
      await readmeScreenshot(page, 'run');
      await page.getByRole('button', { name: 'Log of step greet' }).click();
      await page.getByTestId('log-text').filter({ hasText: 'hello trellis-ui' }).waitFor();
      await page.getByLabel('Search Log of step greet').fill('hello');
      await page.getByText('1 matching line(s)').waitFor();
      await page.goto(url('/dags/greeter'));
      await page.locator('g.node[data-step="settle"][data-status="succeeded"]').waitFor();
      await assertAccessible(page, 'the DAG graph');
      // The view tabs by keyboard: arrows move between them.
      await page.getByRole('tab', { name: 'Graph' }).focus();
      await page.keyboard.press('ArrowLeft');
      await page.getByRole('tab', { name: 'History', selected: true }).waitFor();
      await page.getByRole('table').waitFor();
      await readmeScreenshot(page, 'dag-history');
    });
  });

  test('steps turn green over the event stream: while a run moves, its page fetches nothing', async () => {
    await withScreenshotOnFailure(page, 'live-steps', async () => {
      // GETs of the run record itself (not its logs or sub-resources), on the run page and the graph.
      const fetches: string[] = [];
      const seen = (request: { method(): string; url(): string }) => {
        const path = new URL(request.url()).pathname;
        if (request.method() === 'GET' && /^\/api\/v1\/(dag-runs\/stepwise\/[^/]+|dags\/stepwise)$/.test(path)) fetches.push(path);
      };
      page.on('request', seen);
      try {
        for (const where of ['run page', 'DAG graph'] as const) {
          if (where === 'DAG graph') {
            await page.goto(url('/dags/stepwise'));
            await page.locator('g.node[data-step="first"]').waitFor();
          }
          const dagRunId = await startRun('stepwise');
          if (where === 'run page') await page.goto(url(`/runs/stepwise/${dagRunId}`));
          const node = (step: string, status: string) => page.locator(`g.node[data-step="${step}"][data-status="${status}"]`);
          // The new run's second step (the DAG page showed the last run's green steps before).
          await node('second', 'running').waitFor();
          // Until it ends the run's own status stays `running` (the next step takes 2 s more): no
          // run event, so a page that polled would fetch the run every second or so; a live one not at all.
          const before = fetches.length;
          await node('second', 'succeeded').waitFor();
          assert.deepEqual(fetches.slice(before), [], `${where}: the run was fetched while only its steps moved`);
          await node('third', 'succeeded').waitFor();
        }
      } finally {
        page.off('request', seen);
      }
    });
  });

  test("a step's log lines arrive live over its event stream while it runs: the log is not polled", async () => {
    await withScreenshotOnFailure(page, 'live-log', async () => {
      const dagRunId = await startRun('ticker');
      const logPath = `/api/v1/dag-runs/ticker/${dagRunId}/steps/count/log`;
      const streamPath = `/api/v1/events/dag-runs/ticker/${dagRunId}/steps/count/log`;
      const polls: string[] = [];
      const streams: string[] = [];
      const seen = (request: { method(): string; url(): string }) => {
        const path = new URL(request.url()).pathname;
        if (request.method() !== 'GET') return;
        if (path === logPath) polls.push(path);
        if (path === streamPath) streams.push(new URL(request.url()).search);
      };
      page.on('request', seen);
      try {
        await page.goto(url(`/runs/ticker/${dagRunId}?step=count`));
        const log = page.getByTestId('log-text');
        await log.filter({ hasText: 'tick 2' }).waitFor();
        // From here on every line comes over the stream: the tail fetched on open is not fetched again.
        const before = polls.length;
        await log.filter({ hasText: 'tick 5' }).waitFor();
        const text = (await log.textContent()) ?? '';
        assert.match(text, /tick 3\ntick 4\ntick 5/, 'each line once, in order');
        assert.equal((await page.getByTestId('run-status').textContent())?.includes('running'), true, 'the step is still running');
        assert.deepEqual(polls.slice(before), [], 'the log endpoint was polled while the step ran');
        assert.ok(streams.length > 0, "the step's log stream was opened");
        // From the log's last lines, not its start: a long log is not downloaded whole.
        assert.deepEqual(streams.filter((search) => !search.includes('tail=2000')), [], 'every stream opened from the tail');
        await log.filter({ hasText: 'tick 8' }).waitFor();
        await page.getByTestId('run-status').filter({ hasText: 'succeeded' }).waitFor();
        assert.equal((await log.textContent())?.match(/tick \d/g)?.length, 8, 'no line lost or repeated at the end');
      } finally {
        page.off('request', seen);
      }
    });
  });

  test('documents: create one, read it rendered and as plain text, edit, rename and delete it', async () => {
    await withScreenshotOnFailure(page, 'documents', async () => {
      await page.goto(url('/docs'));
      await page.getByText('No documents yet.').waitFor();
      await page.getByLabel('New document id').fill('runbooks/deploy');
      await page.getByLabel('New document text').fill('---\ntitle: Deploy guide\n---\n# Steps\n\nRun **carefully**:\n\n- build\n- ship `v2`\n');
      await page.getByRole('button', { name: 'Create document' }).click();
      await page.waitForURL(/\/docs\?path=runbooks%2Fdeploy$/);
      const doc = page.getByRole('article', { name: 'Document runbooks/deploy' });
      // Rendered: the markdown heading and list, not the frontmatter.
      await doc.getByRole('heading', { name: 'Steps' }).waitFor();
      await doc.getByRole('listitem').filter({ hasText: 'ship v2' }).waitFor();
      assert.equal(await doc.locator('strong').textContent(), 'carefully');
      await page.getByRole('navigation', { name: 'Documents' }).getByRole('link', { name: 'Deploy guide' }).waitFor();
      await assertAccessible(page, 'the documents page');
      await readmeScreenshot(page, 'documents');
      await doc.getByRole('button', { name: 'Plain text' }).click();
      await page.getByTestId('doc-source').filter({ hasText: 'title: Deploy guide' }).waitFor();
      await doc.getByRole('button', { name: 'Edit' }).click();
      await doc.getByLabel('Document text').fill('---\ntitle: Deploy guide\n---\n# Steps\n\nRoll back first.\n');
      await doc.getByRole('button', { name: 'Save document' }).click();
      await page.getByRole('article', { name: 'Document runbooks/deploy' }).getByText('Roll back first.').waitFor();
      await page.getByLabel('New path').fill('guides/deploy');
      await page.getByRole('button', { name: 'Rename' }).click();
      await page.waitForURL(/\/docs\?path=guides%2Fdeploy$/);
      await page.getByRole('article', { name: 'Document guides/deploy' }).getByText('Roll back first.').waitFor();
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByText('No documents yet.').waitFor();
      assert.equal((await cluster.call('GET', '/docs?flat=true')).json.items instanceof Array, true);
      assert.deepEqual((await cluster.call('GET', '/docs?flat=true')).json.items, []);
    });
  });

  test('search: DAG lines with their numbers, more lines on request; documents paged with more results', async () => {
    await withScreenshotOnFailure(page, 'search', async () => {
      await page.goto(url('/search'));
      await page.getByLabel('Search text').fill('needle');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.waitForURL(/\/search\?q=needle&in=dags$/);
      const lines = page.getByRole('table', { name: 'Matching lines of haystack' }).getByRole('row');
      await lines.first().waitFor();
      assert.equal(await lines.count(), 3);
      // `echo needle 1` is the 3rd line of the file: its number is shown beside it, the line as it is.
      assert.deepEqual(await lines.first().locator('th, td').allTextContents(), ['3', '    command: echo needle 1']);
      await assertAccessible(page, 'the search page');
      await readmeScreenshot(page, 'search');
      await page.getByRole('button', { name: 'More lines of haystack' }).click();
      await lines.nth(7).waitFor();
      assert.equal(await lines.count(), 8);
      assert.equal(await page.getByRole('button', { name: 'More lines of haystack' }).count(), 0);
      // Documents: 25 that match, 20 on the first page, the rest behind "More results".
      for (let i = 0; i < 25; i += 1) assert.equal((await cluster.call('POST', '/docs', { id: `found/note-${String(i).padStart(2, '0')}`, content: `the needle ${i}\n` })).status, 201);
      await page.getByLabel('Search in').selectOption('docs');
      await page.waitForURL(/in=docs$/);
      const hits = page.locator('.search-hits > li');
      await hits.nth(19).waitFor();
      assert.equal(await hits.count(), 20);
      await page.getByRole('button', { name: 'More results' }).click();
      await hits.nth(24).waitFor();
      assert.equal(await hits.count(), 25);
      assert.equal(await page.getByRole('button', { name: 'More results' }).count(), 0);
      await hits.first().getByRole('link').click();
      await page.waitForURL(/\/docs\?path=found%2Fnote-00$/);
      for (let i = 0; i < 25; i += 1) await cluster.call('DELETE', `/docs/doc?path=${encodeURIComponent(`found/note-${String(i).padStart(2, '0')}`)}`);
    });
  });

  test('stop a long run from its page', async () => {
    await withScreenshotOnFailure(page, 'stop', async () => {
      const id = await startRun('long');
      await page.goto(url(`/runs/long/${id}`));
      await page.getByTestId('run-status').filter({ hasText: 'running' }).waitFor();
      await page.getByRole('button', { name: 'Stop' }).click();
      await page.getByTestId('run-status').filter({ hasText: 'aborted' }).waitFor();
    });
  });

  test('approve a waiting step', async () => {
    await withScreenshotOnFailure(page, 'approve', async () => {
      const id = await startRun('gated');
      await page.goto(url(`/runs/release/${id}`));
      await page.getByTestId('run-status').filter({ hasText: 'waiting' }).waitFor();
      const decision = page.getByRole('form', { name: 'Decision for gate' });
      await decision.getByText('Ship it?').waitFor();
      await assertAccessible(page, 'a run waiting for approval');
      // The inputs the step's approval names, the required one marked.
      assert.equal(await decision.getByLabel('TICKET *').getAttribute('required'), '');
      await decision.getByLabel('TICKET *').fill('OPS-7');
      await decision.getByRole('button', { name: 'Approve' }).click();
      await page.getByTestId('run-status').filter({ hasText: 'succeeded' }).waitFor();
      await page.locator('g.node[data-step="ship"][data-status="succeeded"]').waitFor();
      await page.getByRole('button', { name: 'Log of step ship' }).click();
      await page.getByTestId('log-text').filter({ hasText: 'shipped OPS-7' }).waitFor();
      // The DAG is called release but lives in gated.yaml: the title links the file.
      await page.getByRole('heading').getByRole('link', { name: 'release' }).click();
      await page.waitForURL(/\/dags\/gated$/);
    });
  });

  test("see a queued run's reason in words", async () => {
    await withScreenshotOnFailure(page, 'queued', async () => {
      const { json } = await cluster.call('POST', '/dags/on-gpu/enqueue', {});
      const id = json.dagRunId as string;
      await waitFor('the run to carry a condition', async () => (((await cluster.call('GET', `/dag-runs/on-gpu/${id}`)).json.dagRun as { conditions?: unknown[] }).conditions?.length ? true : undefined), 15_000);
      await page.goto(url(`/runs/on-gpu/${id}`));
      await page.getByText('No healthy worker has the labels its worker_selector asks for.').waitFor();
      await assertAccessible(page, 'a queued run');
      await page.getByRole('button', { name: 'Stop' }).click();
    });
  });

  test('see the worker on the queues and workers page', async () => {
    await withScreenshotOnFailure(page, 'workers', async () => {
      await page.goto(url('/queues'));
      const row = page.getByTestId('workers').getByRole('row').filter({ hasText: 'ui-worker' });
      await row.filter({ hasText: 'healthy' }).waitFor();
      await row.filter({ hasText: 'zone=test' }).waitFor();
      await assertAccessible(page, 'queues and workers');
      await readmeScreenshot(page, 'queues-workers');
    });
  });

  test('the DAG list and the runs list pass axe in both themes', async () => {
    await withScreenshotOnFailure(page, 'themes', async () => {
      await page.goto(url('/'));
      await page.getByRole('link', { name: 'greeter' }).waitFor();
      await readmeScreenshot(page, 'dag-list');
      await assertAccessible(page, 'the DAG list (light)');
      await page.getByRole('button', { name: /Switch to dark theme/ }).click();
      await assertAccessible(page, 'the DAG list (dark)');
      await page.goto(url('/runs'));
      await page.getByRole('link', { name: 'greeter' }).first().waitFor();
      await assertAccessible(page, 'the runs list (dark)');
    });
  });

  test('repository sync: configure, pull, see items synced; edit a DAG, see it modified, publish it; a conflict shows who changed it', async () => {
    const remote = await startGitHttpRemote({ 'shipped.yaml': 'steps:\n  - name: s\n    command: echo from the repository\n' });
    const row = (item: string, status: string) => page.locator(`tr[data-item="${item}"][data-status="${status}"]`);
    const editShipped = async (word: string) => {
      await page.goto(url('/dags/shipped?tab=spec'));
      await page.locator('.cm-content').waitFor();
      await replaceSpec(`steps:\n  - name: s\n    command: echo ${word}\n`);
      await page.getByTestId('validation').filter({ hasText: /^valid$/ }).waitFor();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Saved.').waitFor();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sync' }).click();
    };
    try {
      await withScreenshotOnFailure(page, 'sync', async () => {
        // The themes test left the dark theme on: the README's screenshots are light.
        await page.evaluate(() => localStorage.setItem('trellis.theme', 'light'));
        await page.goto(url('/sync'));
        const settings = page.getByRole('form', { name: 'Sync settings' });
        await settings.getByLabel('Sync enabled').check();
        await settings.getByLabel('Repository URL').fill(remote.url);
        await settings.getByLabel('Authentication').selectOption('token');
        await settings.getByLabel('Token', { exact: true }).fill(remote.token);
        await settings.getByRole('button', { name: 'Save settings' }).click();
        // Write-only: once saved the page says a token is set, and holds it nowhere.
        await settings.getByText('A token is set.').waitFor();
        assert.equal((await page.content()).includes(remote.token), false, 'the token is not on the page');
        await settings.getByRole('button', { name: 'Test connection' }).click();
        await settings.getByText(/^Connected/).waitFor();
        await page.getByRole('button', { name: 'Pull', exact: true }).click();
        await row('shipped', 'synced').waitFor();
        await row('greeter', 'untracked').waitFor();
        await page.getByTestId('sync-counts').filter({ hasText: /synced\s*1/ }).waitFor();
        await assertAccessible(page, 'the sync page');
        await page.evaluate(() => window.scrollTo(0, 0));
        await readmeScreenshot(page, 'sync');

        await editShipped('edited here');
        await row('shipped', 'modified').waitFor();
        await page.getByRole('button', { name: 'Diff shipped' }).click();
        await page.getByTestId('sync-local').filter({ hasText: 'edited here' }).waitFor();
        await page.getByTestId('sync-remote').filter({ hasText: 'from the repository' }).waitFor();
        await assertAccessible(page, 'an item of the sync page');
        await page.getByRole('button', { name: 'Publish shipped' }).click();
        await row('shipped', 'synced').waitFor();
        assert.match(remote.clone('reader').read('shipped.yaml') ?? '', /edited here/);

        // Someone else changes it in the repository; publishing a local change then is a conflict.
        const other = remote.clone('someone-else');
        other.write('shipped.yaml', 'steps:\n  - name: s\n    command: echo theirs\n');
        const theirs = other.commitAndPush('their change');
        await editShipped('mine');
        await page.getByRole('button', { name: 'Publish shipped' }).click();
        const conflict = page.getByTestId('sync-conflict');
        await conflict.filter({ hasText: 'Someone Else' }).filter({ hasText: 'their change' }).filter({ hasText: theirs.slice(0, 12) }).waitFor();
        await assertAccessible(page, 'a sync conflict');
        await conflict.getByRole('button', { name: /Overwrite/ }).click();
        await row('shipped', 'synced').waitFor();
        assert.match(other.read('shipped.yaml') ?? '', /echo mine/);

        // A local change discarded: the item is the repository's again.
        await editShipped('scrapped');
        await page.getByRole('button', { name: 'Discard shipped' }).click();
        await row('shipped', 'synced').waitFor();
        const spec = await cluster.call('GET', '/dags/shipped/spec');
        assert.match(JSON.stringify(spec.json), /echo mine/);
        // Moved: renamed here and in the repository in one go.
        await page.getByRole('button', { name: 'Diff shipped' }).click();
        await page.getByLabel('New id of shipped').fill('delivered');
        await page.getByRole('button', { name: 'Move', exact: true }).click();
        await row('delivered', 'synced').waitFor();
        assert.match(other.read('delivered.yaml') ?? '', /echo mine/);
        assert.equal(other.read('shipped.yaml'), undefined);
      });
    } finally {
      await remote.close();
    }
  });
});
