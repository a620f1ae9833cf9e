import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Redis servers a test starts on spare loopback ports with Debian's `redis-server`: a
 * three-node cluster and a sentinel watching a master. Each is stopped by `stop()`.
 */
export interface RedisProcesses {
  ports: number[];
  stop(): Promise<void>;
}

async function listens(port: number): Promise<boolean> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** A free port whose cluster bus port (port + 10000) is free too. */
export async function sparePort(): Promise<number> {
  for (;;) {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    if (port + 10000 < 65536 && (await listens(port + 10000))) return port;
  }
}

export async function redisCli(port: number, ...args: string[]): Promise<string> {
  return (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 })).stdout.trim();
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms`);
}

function startServer(args: string[]): ChildProcess {
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  child.on('error', () => undefined);
  return child;
}

async function stopAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
}

const common = (dir: string, port: number): string[] => ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'no'];

export async function startCluster(dir: string): Promise<RedisProcesses> {
  const ports = [await sparePort(), await sparePort(), await sparePort()];
  const children = ports.map((port) => startServer([...common(dir, port), '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`)]));
  try {
    for (const port of ports) await until(`redis ${port} answering`, async () => (await redisCli(port, 'PING')) === 'PONG');
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], { timeout: 20_000 });
    for (const port of ports) await until(`cluster state ok on ${port}`, async () => (await redisCli(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'));
  } catch (error) {
    await stopAll(children);
    throw error;
  }
  return { ports, stop: () => stopAll(children) };
}

/** A master and one sentinel watching it as `master`; ports are [master, sentinel]. */
export async function startSentinel(dir: string, master: string): Promise<RedisProcesses> {
  const [masterPort, sentinelPort] = [await sparePort(), await sparePort()];
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(conf, `port ${sentinelPort}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor ${master} 127.0.0.1 ${masterPort} 1\nsentinel down-after-milliseconds ${master} 5000\n`);
  const children = [startServer(common(dir, masterPort)), startServer([conf, '--sentinel'])];
  try {
    await until('master answering', async () => (await redisCli(masterPort, 'PING')) === 'PONG');
    await until('sentinel knows the master', async () => (await redisCli(sentinelPort, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', master)).includes(String(masterPort)));
  } catch (error) {
    await stopAll(children);
    throw error;
  }
  return { ports: [masterPort, sentinelPort], stop: () => stopAll(children) };
}

/** A standalone server that speaks TLS only (no plain port), with the given certificate; ports are [tls]. */
export async function startTlsServer(dir: string, cert: { certPath: string; keyPath: string }): Promise<RedisProcesses> {
  const port = await sparePort();
  const children = [startServer([...common(dir, 0), '--tls-port', String(port), '--tls-cert-file', cert.certPath, '--tls-key-file', cert.keyPath, '--tls-auth-clients', 'no'])];
  try {
    await until('TLS redis answering', async () => (await redisCli(port, '--tls', '--insecure', 'PING')) === 'PONG');
  } catch (error) {
    await stopAll(children);
    throw error;
  }
  return { ports: [port], stop: () => stopAll(children) };
}
