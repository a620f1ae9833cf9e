import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import AdmZip from 'adm-zip';
import * as tar from 'tar';
import { loadDag } from '@trellis/core';
import { archiveExecutor } from '../src/executors/archive.js';
import type { StepExecutionContext, StepExecutionResult } from '../src/executors/types.js';

interface Outcome {
  result: StepExecutionResult;
  stdout: string;
  stderr: string;
}

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function collector(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** Runs one archive step, parsed from YAML as a user would write it, in `workingDir`. */
/**
 * The step as the executor sees it once `${...}` references are expanded: validation takes a
 * reference on trust, so the executor checks the expanded command and config again.
 */
async function archive(workingDir: string, command: string, config: Record<string, unknown>): Promise<Outcome> {
  const loaded = loadDag(JSON.stringify({ steps: [{ name: 'a', type: 'archive', command: '${OPERATION}' }] }));
  const parsed = loaded.dag?.steps[0];
  assert.ok(parsed, loaded.errors.join('; '));
  const step = { ...parsed, commands: [command], config };
  const out = collector();
  const err = collector();
  const ctx: StepExecutionContext = { step, env: {}, workingDir, shell: ['sh'], stdout: out.stream, stderr: err.stream, signal: new AbortController().signal, stopSignal: 'SIGTERM', killAfterMs: 1000 };
  const result = await archiveExecutor.run(ctx);
  return { result, stdout: out.text(), stderr: err.text() };
}

/** A working directory holding data/a.txt, data/sub/b.txt and data/debug.log. */
function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-archive-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'data', 'sub'), { recursive: true });
  writeFileSync(join(dir, 'data', 'a.txt'), 'alpha\n');
  writeFileSync(join(dir, 'data', 'sub', 'b.txt'), 'bravo\n');
  writeFileSync(join(dir, 'data', 'debug.log'), 'noise\n');
  return dir;
}

function read(dir: string, ...path: string[]): string {
  return readFileSync(join(dir, ...path), 'utf8');
}

describe('archive executor', () => {
  for (const name of ['out.tar.gz', 'out.zip']) {
    test(`create, list and extract ${name}; overwrite is refused unless asked for`, async () => {
      const dir = workspace();
      const created = await archive(dir, 'create', { source: 'data', destination: `build/${name}`, exclude: '*.log' });
      assert.deepEqual(created.result, { exitCode: 0 });
      assert.match(created.stderr, /created .*build\/out\.(tar\.gz|zip) \(3 entries\)/);

      const listed = await archive(dir, 'list', { source: `build/${name}` });
      assert.deepEqual(listed.result, { exitCode: 0 });
      assert.deepEqual(listed.stdout.split('\n'), ['a.txt', 'sub/', 'sub/b.txt', '']);

      const extracted = await archive(dir, 'extract', { source: `build/${name}`, destination: 'unpacked' });
      assert.deepEqual(extracted.result, { exitCode: 0 });
      assert.equal(read(dir, 'unpacked', 'a.txt'), 'alpha\n');
      assert.equal(read(dir, 'unpacked', 'sub', 'b.txt'), 'bravo\n');
      assert.equal(existsSync(join(dir, 'unpacked', 'debug.log')), false);

      writeFileSync(join(dir, 'unpacked', 'a.txt'), 'changed\n');
      const again = await archive(dir, 'extract', { source: `build/${name}`, destination: 'unpacked' });
      assert.equal(again.result.exitCode, 1);
      assert.match(again.result.error ?? '', /refusing to overwrite 2 existing files .*a\.txt/);
      assert.equal(read(dir, 'unpacked', 'a.txt'), 'changed\n');
      assert.equal((await archive(dir, 'extract', { source: `build/${name}`, destination: 'unpacked', overwrite: true })).result.exitCode, 0);
      assert.equal(read(dir, 'unpacked', 'a.txt'), 'alpha\n');

      const recreate = await archive(dir, 'create', { source: 'data', destination: `build/${name}` });
      assert.match(recreate.result.error ?? '', /refusing to overwrite .*out\./);
      assert.equal((await archive(dir, 'create', { source: 'data', destination: `build/${name}`, overwrite: 'true' })).result.exitCode, 0);
    });
  }

  test('include and exclude globs filter list and extract; format can be given explicitly', async () => {
    const dir = workspace();
    assert.equal((await archive(dir, 'create', { source: 'data', destination: 'bundle.bin', format: 'tar' })).result.exitCode, 0);
    const txt = await archive(dir, 'list', { source: 'bundle.bin', format: 'tar', include: ['**/*.txt'] });
    assert.deepEqual(txt.stdout.split('\n'), ['a.txt', 'sub/b.txt', '']);
    const notSub = await archive(dir, 'extract', { source: 'bundle.bin', format: 'tar', destination: 'out', exclude: 'sub' });
    assert.equal(notSub.result.exitCode, 0);
    assert.equal(read(dir, 'out', 'debug.log'), 'noise\n');
    assert.equal(existsSync(join(dir, 'out', 'sub')), false);
  });

  test('a single file can be archived; extract defaults to the working directory', async () => {
    const dir = workspace();
    assert.equal((await archive(dir, 'create', { source: 'data/a.txt', destination: 'one.tgz' })).result.exitCode, 0);
    rmSync(join(dir, 'data'), { recursive: true });
    assert.equal((await archive(dir, 'extract', { source: 'one.tgz' })).result.exitCode, 0);
    assert.equal(read(dir, 'a.txt'), 'alpha\n');
  });

  test('an entry that would land outside the destination refuses the whole archive', async () => {
    const dir = workspace();
    mkdirSync(join(dir, 'pack'));
    writeFileSync(join(dir, 'pack', 'fine.txt'), 'ok\n');
    writeFileSync(join(dir, 'evil.txt'), 'owned\n');
    await tar.create({ file: join(dir, 'evil.tgz'), gzip: true, cwd: join(dir, 'pack'), preservePaths: true }, ['fine.txt', '../evil.txt']);
    // adm-zip cleans names it is given, so the traversal is written into the bytes (same length, CRC excludes names).
    const zip = new AdmZip();
    zip.addFile('fine.txt', Buffer.from('ok\n'));
    zip.addFile('xxxevil.txt', Buffer.from('owned\n'));
    const bytes = zip.toBuffer();
    writeFileSync(join(dir, 'evil.zip'), Buffer.from(bytes.toString('latin1').replaceAll('xxxevil.txt', '../evil.txt'), 'latin1'));
    rmSync(join(dir, 'evil.txt'));

    for (const file of ['evil.tgz', 'evil.zip']) {
      const outcome = await archive(dir, 'extract', { source: file, destination: 'target' });
      assert.equal(outcome.result.exitCode, 1, file);
      assert.match(outcome.result.error ?? '', /^refusing to extract: 1 entries would land outside .*target: \.\.\/evil\.txt$/, file);
      assert.match(outcome.stderr, /refusing to extract/, file);
      assert.equal(existsSync(join(dir, 'evil.txt')), false, file);
      assert.equal(existsSync(join(dir, 'target', 'fine.txt')), false, `${file}: nothing is extracted`);
    }
  });

  test('a symbolic link pointing outside the destination is refused', async () => {
    const dir = workspace();
    symlinkSync('../../../etc', join(dir, 'data', 'sub', 'escape'));
    assert.equal((await archive(dir, 'create', { source: 'data', destination: 'links.tar' })).result.exitCode, 0);
    const outcome = await archive(dir, 'extract', { source: 'links.tar', destination: 'target' });
    assert.equal(outcome.result.exitCode, 1);
    assert.match(outcome.result.error ?? '', /outside .*: sub\/escape -> \.\.\/\.\.\/\.\.\/etc$/);
  });

  test('bad operations, missing paths and unknown formats fail with a clear error', async () => {
    const dir = workspace();
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['compress', {}, /^unknown archive operation "compress" \(create, extract or list\)$/],
      ['create', { source: 'data' }, /^archive create needs config\.destination$/],
      ['list', {}, /^archive list needs config\.source$/],
      ['create', { source: 'data', destination: 'out.rar' }, /cannot tell the archive format of .*out\.rar/],
      ['list', { source: 'missing.zip' }, /^archive list failed: /],
      ['extract', { source: 'x.tar', format: '7z' }, /^invalid archive config: format/],
    ];
    for (const [command, config, expected] of cases) {
      const outcome = await archive(dir, command, config);
      assert.equal(outcome.result.exitCode, 1, command);
      assert.match(outcome.result.error ?? '', expected, command);
      assert.ok(outcome.stderr.includes(outcome.result.error ?? '-'), command);
    }
  });
});
