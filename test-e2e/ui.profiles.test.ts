// The web UI's workspaces and runtime-profile pages against a real coordinator with built-in
// users: an admin creates and edits workspaces, profiles, Global and workspace defaults; a
// secret goes in and is never shown again; managers, operators and viewers see only the
// actions their role may take. axe-core checks every page visited.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Cluster } from './support/cluster.js';
import { assertAccessible, launchChromium, readmeScreenshot, withScreenshotOnFailure } from './support/browser.js';

const cluster = new Cluster({
  dags: { hello: 'labels: [workspace=analytics]\nsteps:\n  - name: greet\n    command: echo hi\n' },
  config: `auth:\n  mode: builtin\nsecretsKey: ${randomBytes(32).toString('base64')}\n`,
});

const SECRET = `hunter2-${randomBytes(6).toString('hex')}`;
const keys: Record<'admin' | 'manager' | 'operator' | 'viewer', string> = { admin: '', manager: '', operator: '', viewer: '' };

let browser: Browser;
let context: BrowserContext;
let page: Page;

const url = (path: string) => `http://127.0.0.1:${cluster.httpPort}${path}`;


/** The next page loads signed in with `token` (a login token or an API key). */
async function signInAs(token: string): Promise<void> {
  await page.evaluate((value) => localStorage.setItem('trellis.token', value), token);
}

async function apiAs(token: string, method: string, path: string, body?: unknown) {
  cluster.authorization = `Bearer ${token}`;
  return cluster.call(method, path, body);
}

before(async () => {
  await cluster.start();
  const setup = await cluster.call('POST', '/auth/setup', { username: 'root', password: 'correct horse battery' });
  assert.equal(setup.status, 200, JSON.stringify(setup.json));
  keys.admin = setup.json.token as string;
  for (const role of ['manager', 'operator', 'viewer'] as const) {
    const made = await apiAs(keys.admin, 'POST', '/api-keys', { name: `ui-${role}`, role });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    keys[role] = made.json.key as string;
  }
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  context.setDefaultTimeout(15_000);
  page = await context.newPage();
  // Deletions ask for confirmation; the tests confirm.
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(url('/login'));
  await signInAs(keys.admin);
});

after(async () => {
  await browser?.close();
  await cluster.stop();
});

describe('workspaces and runtime profiles in the web UI', () => {
  test('an admin creates a workspace and edits its description', async () => {
    await withScreenshotOnFailure(page, 'workspaces', async () => {
      await page.goto(url('/'));
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workspaces' }).click();
      await page.getByLabel('Workspace name').fill('analytics');
      await page.getByLabel('Workspace description').fill('Data team');
      await page.getByRole('button', { name: 'Create workspace' }).click();
      await page.getByRole('row').filter({ hasText: 'Data team' }).waitFor();
      await page.getByRole('button', { name: 'Edit analytics' }).click();
      const edit = page.getByRole('form', { name: 'Edit workspace analytics' });
      await edit.getByLabel('Workspace description').fill('Data and BI');
      await edit.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('row').filter({ hasText: 'Data and BI' }).waitFor();
      const listed = await cluster.call('GET', '/workspaces');
      assert.deepEqual((listed.json.workspaces as Array<{ name: string; description?: string }>).map((w) => [w.name, w.description]), [['analytics', 'Data and BI']]);
      await assertAccessible(page, 'the workspaces page');
    });
  });

  test('an admin creates a profile, sets a variable and a write-only secret, disables and protects it', async () => {
    await withScreenshotOnFailure(page, 'profile', async () => {
      await page.getByRole('link', { name: 'Profiles' }).click();
      await page.getByLabel('Profile name').fill('prod');
      await page.getByLabel('Profile description').fill('Production');
      await page.getByRole('button', { name: 'Create profile' }).click();
      await page.getByRole('link', { name: 'prod' }).click();
      await page.getByRole('heading', { name: 'Profile prod' }).waitFor();

      await page.getByLabel('Entry key').fill('REGION');
      await page.getByLabel('Variable value').fill('eu-west');
      await page.getByRole('button', { name: 'Set variable' }).click();
      await page.getByRole('row').filter({ hasText: 'REGION' }).filter({ hasText: 'eu-west' }).waitFor();

      await page.getByLabel('Entry key').fill('DB_PASSWORD');
      await page.getByLabel('Entry kind').selectOption('secret');
      assert.equal(await page.getByLabel('Secret value').getAttribute('type'), 'password');
      await page.getByLabel('Secret value').fill(SECRET);
      await page.getByRole('button', { name: 'Set secret' }).click();
      await page.getByText('Secret DB_PASSWORD set; its value is not shown again.').waitFor();
      await page.getByRole('row').filter({ hasText: 'DB_PASSWORD' }).filter({ hasText: 'write-only' }).waitFor();
      assert.equal(await page.getByLabel('Secret value').inputValue(), '', 'the typed secret is cleared');
      assert.equal((await page.content()).includes(SECRET), false, 'the secret appears nowhere in the page');

      // Rotating fills in the key and asks only for the new value.
      await page.getByRole('button', { name: 'Rotate DB_PASSWORD' }).click();
      assert.equal(await page.getByLabel('Entry key').inputValue(), 'DB_PASSWORD');
      assert.equal(await page.getByLabel('Secret value').inputValue(), '');

      await page.getByRole('button', { name: 'Disable' }).click();
      await page.getByTestId('profile-state').getByText('disabled').waitFor();
      await page.getByRole('button', { name: 'Protect' }).click();
      await page.getByTestId('profile-state').getByText('protected').waitFor();
      await readmeScreenshot(page, 'profile');
      await assertAccessible(page, 'a profile page');

      const stored = await apiAs(keys.admin, 'GET', '/profiles/prod');
      assert.equal(stored.json.status, 'disabled');
      assert.equal(stored.json.protected, true);
      const entries = stored.json.entries as Array<{ key: string; kind: string; value?: string }>;
      assert.deepEqual(entries.map((e) => [e.key, e.kind, e.value]), [['DB_PASSWORD', 'secret', undefined], ['REGION', 'variable', 'eu-west']]);
    });
  });

  test('Global and workspace defaults: set, listed, deleted', async () => {
    await withScreenshotOnFailure(page, 'defaults', async () => {
      await page.getByRole('link', { name: 'All profiles' }).click();
      await page.getByRole('link', { name: 'Global defaults' }).click();
      await page.getByRole('heading', { name: 'Global defaults' }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Disable' }).count(), 0, 'a defaults layer has no status');
      await page.getByLabel('Entry key').fill('LOG_LEVEL');
      await page.getByLabel('Variable value').fill('info');
      await page.getByRole('button', { name: 'Set variable' }).click();
      await page.getByRole('row').filter({ hasText: 'LOG_LEVEL' }).waitFor();
      await assertAccessible(page, 'the Global defaults');

      await page.getByRole('link', { name: 'All profiles' }).click();
      await page.getByRole('link', { name: 'Workspace analytics' }).click();
      await page.getByRole('heading', { name: 'Defaults of workspace analytics' }).waitFor();
      await page.getByLabel('Entry key').fill('WAREHOUSE_TOKEN');
      await page.getByLabel('Entry kind').selectOption('secret');
      await page.getByLabel('Secret value').fill(SECRET);
      await page.getByRole('button', { name: 'Set secret' }).click();
      await page.getByRole('row').filter({ hasText: 'WAREHOUSE_TOKEN' }).waitFor();
      await page.getByLabel('Entry key').fill('DATASET');
      await page.getByLabel('Entry kind').selectOption('variable');
      await page.getByLabel('Variable value').fill('events');
      await page.getByRole('button', { name: 'Set variable' }).click();
      await page.getByRole('row').filter({ hasText: 'DATASET' }).waitFor();
      await page.getByRole('button', { name: 'Delete DATASET' }).click();
      await page.getByText('DATASET deleted.').waitFor();
      // The notice comes before the profile is read again: the row goes with that answer.
      await page.getByRole('row').filter({ hasText: 'DATASET' }).waitFor({ state: 'detached' });

      const global = await apiAs(keys.admin, 'GET', '/profiles/_global');
      assert.deepEqual((global.json.entries as Array<{ key: string }>).map((e) => e.key), ['LOG_LEVEL']);
      const workspace = await apiAs(keys.admin, 'GET', '/profiles/_workspaces/analytics');
      assert.deepEqual((workspace.json.entries as Array<{ key: string; kind: string }>).map((e) => [e.key, e.kind]), [['WAREHOUSE_TOKEN', 'secret']]);
    });
  });

  test('a manager manages profiles but neither sees protected ones nor may protect', async () => {
    await withScreenshotOnFailure(page, 'manager', async () => {
      await signInAs(keys.manager);
      await page.goto(url('/profiles'));
      await page.getByRole('heading', { name: 'Runtime profiles' }).waitFor();
      assert.equal(await page.getByRole('checkbox', { name: 'protected' }).count(), 0);
      await page.getByLabel('Profile name').fill('staging');
      await page.getByRole('button', { name: 'Create profile' }).click();
      await page.getByRole('link', { name: 'staging' }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'prod' }).count(), 0, 'the protected profile is not listed');
      await page.goto(url('/profiles/prod'));
      await page.getByRole('alert').waitFor();
      await page.goto(url('/profiles/staging'));
      await page.getByRole('button', { name: 'Disable' }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Protect' }).count(), 0);
    });
  });

  test('an operator reads profiles without changing them; workspaces are read-only for it', async () => {
    await withScreenshotOnFailure(page, 'operator', async () => {
      await signInAs(keys.operator);
      await page.goto(url('/profiles/staging'));
      await page.getByRole('heading', { name: 'Profile staging' }).waitFor();
      await page.getByRole('heading', { name: 'Entries' }).waitFor();
      assert.equal(await page.getByRole('form', { name: 'Set an entry' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Disable' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Delete' }).count(), 0);
      await page.goto(url('/profiles'));
      await page.getByRole('link', { name: 'staging' }).waitFor();
      assert.equal(await page.getByRole('form', { name: 'New profile' }).count(), 0);
      await page.goto(url('/workspaces'));
      await page.getByRole('row').filter({ hasText: 'analytics' }).waitFor();
      assert.equal(await page.getByRole('form', { name: 'New workspace' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Edit analytics' }).count(), 0);
      await page.getByRole('link', { name: 'Defaults' }).waitFor();
    });
  });

  test('a viewer has no profile pages and reads workspaces only', async () => {
    await withScreenshotOnFailure(page, 'viewer-profiles', async () => {
      await signInAs(keys.viewer);
      await page.goto(url('/workspaces'));
      await page.getByRole('row').filter({ hasText: 'analytics' }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'Profiles' }).count(), 0);
      assert.equal(await page.getByRole('link', { name: 'Defaults' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Delete analytics' }).count(), 0);
      await page.goto(url('/profiles'));
      await page.getByText('Runtime profiles are for roles that may run DAGs.').waitFor();
      await assertAccessible(page, 'a viewer on the profiles page');
    });
  });

  test('an admin deletes a profile and a workspace (its defaults go with it)', async () => {
    await withScreenshotOnFailure(page, 'deletions', async () => {
      await signInAs(keys.admin);
      await page.goto(url('/profiles/staging'));
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.waitForURL(/\/profiles$/);
      await page.getByRole('link', { name: 'prod' }).waitFor();
      assert.equal(await page.getByRole('link', { name: 'staging' }).count(), 0);
      await page.goto(url('/workspaces'));
      await page.getByRole('button', { name: 'Delete analytics' }).click();
      await page.getByText('No workspaces yet.').waitFor();
      const layer = await apiAs(keys.admin, 'GET', '/profiles/_workspaces/analytics');
      assert.equal(layer.status, 404, 'the workspace defaults went with the workspace');
    });
  });
});
