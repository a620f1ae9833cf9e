// The web UI as the coordinator serves it: the page shell for every page path under the base
// path (deep links load on reload) with the mount written in, hashed assets, the API untouched,
// and nothing at all when no UI was built.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestCoordinator, type TestCoordinator } from './support/coordinator.js';

const uiDir = mkdtempSync(join(tmpdir(), 'trellis-ui-'));
const emptyDir = mkdtempSync(join(tmpdir(), 'trellis-no-ui-'));
let mounted: TestCoordinator;
let bare: TestCoordinator;

before(async () => {
  mkdirSync(join(uiDir, 'assets'));
  writeFileSync(join(uiDir, 'index.html'), '<!doctype html><html><head><!--trellis-mount--><script type="module" src="./assets/app-1.js"></script></head><body></body></html>');
  writeFileSync(join(uiDir, 'assets', 'app-1.js'), 'console.log("ui")');
  mounted = await startTestCoordinator('http_ui_assets', {}, { basePath: '/mount', uiDir });
  bare = await startTestCoordinator('http_ui_absent', {}, { uiDir: emptyDir });
});
after(async () => {
  await mounted.stop();
  await bare.stop();
  rmSync(uiDir, { recursive: true, force: true });
  rmSync(emptyDir, { recursive: true, force: true });
});

const origin = (t: TestCoordinator) => new URL(t.coordinator.apiUrl).origin;

describe('the web UI under a base path', () => {
  test('every page path answers the shell, with its base and API path written in', async () => {
    for (const path of ['/mount', '/mount/', '/mount/dags/hello', '/mount/runs/hello/abc?step=x']) {
      const res = await fetch(`${origin(mounted)}${path}`);
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      const html = await res.text();
      assert.match(html, /<base href="\/mount\/"><meta name="trellis-api" content="\/mount\/api\/v1">/, path);
      assert.doesNotMatch(html, /trellis-mount/);
    }
  });

  test('assets are served with long caching; a missing asset is a 404, not the shell', async () => {
    const asset = await fetch(`${origin(mounted)}/mount/assets/app-1.js`);
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('cache-control') ?? '', /immutable/);
    assert.equal(await asset.text(), 'console.log("ui")');
    assert.equal((await fetch(`${origin(mounted)}/mount/assets/gone.js`)).status, 404);
  });

  test('the API keeps its JSON answers, 404s included', async () => {
    assert.equal((await fetch(`${mounted.coordinator.apiUrl}/health`)).status, 200);
    const missing = await fetch(`${mounted.coordinator.apiUrl}/no-such-route`);
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { code: string }).code, 'not_found');
  });

  test('outside the base path nothing is served', async () => {
    assert.equal((await fetch(`${origin(mounted)}/dags/hello`)).status, 404);
  });
});

describe('without a built UI', () => {
  test('the coordinator starts and serves the API only', async () => {
    assert.equal((await fetch(`${origin(bare)}/`)).status, 404);
    assert.equal((await fetch(`${bare.coordinator.apiUrl}/health`)).status, 200);
  });
});
