// `npm install` links the workspace's bin as node_modules/.bin/trellis (what `npx trellis` runs).
// npm links only a file that exists at install time, before any build: hence a shim.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const CLI = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'trellis-cli-bin-'));

after(() => rmSync(dir, { recursive: true, force: true }));

function run(file: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [file, ...args], (error, out, err) => done({ code: error === null ? 0 : Number(error.code), out, err }));
  });
}

describe('the trellis bin', () => {
  test('the package bin is a file in the repository, executable, that runs dist/main.js', async () => {
    const manifest = JSON.parse(readFileSync(join(CLI, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    const shim = join(CLI, manifest.bin.trellis ?? '');
    assert.notEqual(statSync(shim).mode & 0o111, 0, 'executable');
    assert.match(readFileSync(shim, 'utf8'), /^#!\/usr\/bin\/env node\n/);
    // The shim in a package layout of its own, with a stand-in for the compiled CLI.
    mkdirSync(join(dir, 'bin'));
    mkdirSync(join(dir, 'dist'));
    copyFileSync(shim, join(dir, 'bin', 'trellis.js'));
    writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n');
    const unbuilt = await run(join(dir, 'bin', 'trellis.js'), ['--help']);
    assert.equal(unbuilt.code, 1);
    assert.match(unbuilt.err, /dist\/main\.js is not built yet: run `npm run build`/);
    writeFileSync(join(dir, 'dist', 'main.js'), "process.stdout.write(`compiled cli ${process.argv.slice(2).join(' ')}\\n`);\n");
    assert.deepEqual(await run(join(dir, 'bin', 'trellis.js'), ['--help']), { code: 0, out: 'compiled cli --help\n', err: '' });
  });
});
