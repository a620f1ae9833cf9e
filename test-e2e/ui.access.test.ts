// The web UI with built-in users: first-admin setup from the login page, the admin pages, and a
// viewer's session where every action its role may not take is disabled or hidden.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { Cluster } from './support/cluster.js';
import { assertAccessible, launchChromium, readmeScreenshot, withScreenshotOnFailure } from './support/browser.js';

const cluster = new Cluster({
  dags: { hello: 'steps:\n  - name: greet\n    command: echo hi\n' },
  config: 'auth:\n  mode: builtin\n',
});

let browser: Browser;
let page: Page;
let viewerKey = '';
const url = (path: string) => `http://127.0.0.1:${cluster.httpPort}${path}`;


before(async () => {
  await cluster.start();
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.setDefaultTimeout(15_000);
});
after(async () => {
  await browser?.close();
  await cluster.stop();
});

describe('the web UI with built-in users', () => {
  test('a fresh installation: login page, then first-admin setup signs the admin in', async () => {
    await withScreenshotOnFailure(page, 'setup', async () => {
      await page.goto(url('/runs'));
      await page.waitForURL(/\/login$/);
      await assertAccessible(page, 'the login page');
      await readmeScreenshot(page, 'login');
      await page.getByLabel('Username').fill('root');
      await page.getByLabel('Password').fill('wrong-password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      // The API's own message, not a blank page.
      await page.getByRole('alert').waitFor();
      await page.getByRole('link', { name: 'Create the first administrator' }).click();
      await page.getByLabel('Username').fill('root');
      await page.getByLabel('Password').fill('correct horse battery');
      await page.getByRole('button', { name: 'Create administrator' }).click();
      await page.getByRole('link', { name: 'hello' }).waitFor();
      await page.getByRole('link', { name: 'Users' }).click();
      await page.getByRole('row').filter({ hasText: 'root' }).waitFor();
      await assertAccessible(page, 'the users page');
    });
  });

  test('an admin creates a viewer API key; its secret is shown once', async () => {
    await withScreenshotOnFailure(page, 'api-key', async () => {
      await page.getByRole('link', { name: 'API keys' }).click();
      await page.getByLabel('Key name').fill('dashboard');
      await page.getByLabel('Role').selectOption('viewer');
      await page.getByRole('button', { name: 'Create key' }).click();
      viewerKey = (await page.locator('[role="status"] code').textContent()) ?? '';
      assert.match(viewerKey, /^svc_/);
      await page.getByRole('row').filter({ hasText: 'dashboard' }).waitFor();
      await assertAccessible(page, 'the API keys page');
      // The webhooks page shares the list frame: its empty state, then the new hook's row.
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByText('No webhooks yet.').waitFor();
      await page.getByLabel('DAG file name').fill('hello');
      await page.getByRole('button', { name: 'Create webhook' }).click();
      await page.getByRole('row').filter({ hasText: 'hello' }).getByText('enabled').waitFor();
      await assertAccessible(page, 'the webhooks page');
    });
  });

  test('repository sync in read-only mode: an admin may pull but nothing that publishes', async () => {
    await withScreenshotOnFailure(page, 'sync-read-only', async () => {
      await page.getByRole('link', { name: 'Sync' }).click();
      const settings = page.getByRole('form', { name: 'Sync settings' });
      await settings.getByLabel('Sync enabled').check();
      await settings.getByLabel('Repository URL').fill('http://127.0.0.1:9/nowhere.git');
      await settings.getByLabel(/Publish to the repository/).uncheck();
      await settings.getByRole('button', { name: 'Save settings' }).click();
      await page.getByTestId('sync-summary').filter({ hasText: 'read-only mode' }).waitFor();
      const row = page.locator('tr[data-item="hello"][data-status="untracked"]');
      for (const action of ['Publish', 'Delete']) assert.equal(await row.getByRole('button', { name: `${action} hello` }).isDisabled(), true, action);
      assert.equal(await page.getByRole('button', { name: 'Publish all' }).isDisabled(), true);
      assert.equal(await page.getByRole('button', { name: 'Pull', exact: true }).isDisabled(), false);
      assert.equal(await row.getByRole('button', { name: 'Forget hello' }).isDisabled(), false);
      await assertAccessible(page, 'the sync page in read-only mode');
      // Publishing on again: the viewer's test below writes a document first.
      await settings.getByLabel(/Publish to the repository/).check();
      await settings.getByRole('button', { name: 'Save settings' }).click();
      await page.getByTestId('sync-summary').filter({ hasText: 'Enabled' }).filter({ hasNotText: 'read-only' }).waitFor();
    });
  });

  test("a viewer sees the DAGs but not the actions its role may not take", async () => {
    await withScreenshotOnFailure(page, 'viewer', async () => {
      // A document the admin writes, for the viewer to read below.
      const created = await page.evaluate(async () => {
        const res = await fetch('/api/v1/docs', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${localStorage.getItem('trellis.token') ?? ''}` },
          body: JSON.stringify({ id: 'notes', content: '# Notes\n' }),
        });
        return res.status;
      });
      assert.equal(created, 201);
      await page.evaluate((key) => localStorage.setItem('trellis.token', key), viewerKey);
      await page.goto(url('/'));
      await page.getByRole('link', { name: 'hello' }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Start hello' }).isDisabled(), true);
      assert.equal(await page.getByRole('checkbox', { name: /schedule of hello/ }).isDisabled(), true);
      assert.equal(await page.getByRole('button', { name: 'New DAG' }).count(), 0);
      assert.equal(await page.getByRole('link', { name: 'Users' }).count(), 0);
      await page.goto(url('/queues'));
      assert.equal(await page.getByRole('button', { name: 'Pause' }).isDisabled(), true);
      await page.goto(url('/admin/users'));
      await page.getByText('This page is for administrators.').waitFor();
      // Documents: readable, but no create form, and no edit, rename or delete.
      await page.goto(url('/docs?path=notes'));
      const doc = page.getByRole('article', { name: 'Document notes' });
      await doc.getByRole('heading', { name: 'Notes', exact: true }).waitFor();
      assert.equal(await doc.getByRole('button', { name: 'Edit' }).isDisabled(), true);
      assert.equal(await doc.getByRole('button', { name: 'Delete' }).isDisabled(), true);
      assert.equal(await page.getByRole('button', { name: 'Rename' }).count(), 0);
      assert.equal(await page.getByRole('form', { name: 'New document' }).count(), 0);
      await assertAccessible(page, 'the documents page of a viewer');
      // Sync: the status and the items, but no action and no change of the settings.
      await page.goto(url('/sync'));
      const row = page.locator('tr[data-item="hello"]');
      for (const action of ['Publish', 'Discard', 'Forget', 'Delete']) assert.equal(await row.getByRole('button', { name: `${action} hello` }).isDisabled(), true, action);
      for (const button of ['Pull', 'Publish all', 'Test connection', 'Save settings']) assert.equal(await page.getByRole('button', { name: button, exact: true }).isDisabled(), true, button);
      await assertAccessible(page, 'the sync page of a viewer');
    });
  });
});
