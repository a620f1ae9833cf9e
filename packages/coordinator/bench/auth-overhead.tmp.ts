import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger, loadServerConfig, startCoordinator } from '@trellis/coordinator';

async function measure(url: string, headers: Record<string, string>, n: number): Promise<number> {
  for (let i = 0; i < 50; i += 1) await (await fetch(url, { headers })).text();
  const started = performance.now();
  for (let i = 0; i < n; i += 1) await (await fetch(url, { headers })).text();
  return (performance.now() - started) / n;
}

for (const mode of ['none', 'builtin'] as const) {
  const dir = mkdtempSync(join(tmpdir(), 'auth-bench-'));
  mkdirSync(join(dir, 'dags'));
  for (let i = 0; i < 20; i += 1) writeFileSync(join(dir, 'dags', `d${i}.yaml`), 'steps:\n  - echo hi\n');
  const config = loadServerConfig({ cwd: dir, env: {}, overrides: { port: 0, grpcPort: -1, dagsDir: join(dir, 'dags'), dataDir: join(dir, 'data'), accessLog: false, auth: { mode } } });
  const c = await startCoordinator(config, createSilentLogger(), { watch: false });
  const url = `${c.apiUrl}/dags`;
  if (mode === 'none') console.log('none      ms/req', (await measure(url, {}, 2000)).toFixed(3));
  else {
    const setup = await fetch(`${c.apiUrl}/auth/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'bench password' }) });
    const { token } = (await setup.json()) as { token: string };
    console.log('jwt       ms/req', (await measure(url, { authorization: `Bearer ${token}` }, 2000)).toFixed(3));
    console.log('basic     ms/req', (await measure(url, { authorization: `Basic ${Buffer.from('admin:bench password').toString('base64')}` }, 2000)).toFixed(3));
  }
  await c.close();
}
