#!/usr/bin/env node
// Saves the OpenAPI document a freshly built coordinator serves to openapi.json, the file the
// UI's types are generated from. Run it (npm run save:openapi -w packages/ui) after an API
// change; a coordinator test fails while the saved copy and the served document differ.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'trellis-openapi-'));
mkdirSync(join(dir, 'dags'));
const child = spawn(process.execPath, [join(root, 'packages', 'cli', 'dist', 'main.js'), 'server', '--port', '0', '--grpc-port', '-1', '--data-dir', join(dir, 'data'), '--dags-dir', join(dir, 'dags')], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
let out = '';
const apiUrl = await new Promise((resolveUrl, reject) => {
  child.stdout.on('data', (d) => {
    out += d.toString();
    const match = /"apiUrl":"([^"]+)"/.exec(out);
    if (match) resolveUrl(match[1]);
  });
  child.once('exit', (code) => reject(new Error(`the coordinator exited (${code}):\n${out}`)));
});
try {
  const res = await fetch(`${apiUrl}/openapi.json`);
  if (!res.ok) throw new Error(`GET openapi.json: ${res.status}`);
  writeFileSync(join(import.meta.dirname, '..', 'openapi.json'), `${JSON.stringify(await res.json(), null, 2)}\n`);
  console.log('saved packages/ui/openapi.json');
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
