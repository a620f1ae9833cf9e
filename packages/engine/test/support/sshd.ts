import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { tempDir } from './run-yaml.js';

/** Debian's OpenSSH server on a loopback port, with its own host key, user key and config. */
export interface Sshd {
  port: number;
  /** known_hosts naming this server's host key. */
  knownHostsFile: string;
  /** A private key the server accepts for the current user. */
  userKeyFile: string;
  /** A known_hosts file naming some other key for this server. */
  wrongKnownHostsFile: string;
  stop(): Promise<void>;
}

/** A local user that logs in with a password, made for one test file and removed after it. */
export interface PasswordUser {
  name: string;
  password: string;
  remove(): void;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function keygen(path: string): string {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'trellis-test', '-f', path]);
  return readFileSync(`${path}.pub`, 'utf8').trim();
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function untilListening(child: ChildProcess, port: number, log: () => string): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    if (child.exitCode !== null) throw new Error(`sshd exited with ${child.exitCode}: ${log()}`);
    if (await accepts(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`sshd did not listen on ${port}: ${log()}`);
}

/** Password logins need a system account; the user running the tests must be root to make one. */
export function createPasswordUser(): PasswordUser {
  const name = `trellis-t${randomBytes(3).toString('hex')}`;
  const password = randomBytes(9).toString('base64url');
  execFileSync('useradd', ['--no-create-home', '--no-user-group', '--shell', '/bin/sh', '--home-dir', '/nonexistent', name]);
  execFileSync('chpasswd', { input: `${name}:${password}\n` });
  return { name, password, remove: () => execFileSync('userdel', [name]) };
}

export async function startSshd(allowUsers: string[]): Promise<Sshd> {
  const dir = tempDir('trellis-sshd-');
  const hostKey = keygen(join(dir, 'host_key'));
  const userKey = keygen(join(dir, 'user_key'));
  const otherKey = keygen(join(dir, 'other_key'));
  const port = await freePort();
  writeFileSync(join(dir, 'authorized_keys'), `${userKey}\n`);
  writeFileSync(join(dir, 'known_hosts'), `[127.0.0.1]:${port} ${hostKey}\n`);
  writeFileSync(join(dir, 'wrong_known_hosts'), `[127.0.0.1]:${port} ${otherKey}\n`);
  writeFileSync(
    join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host_key')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'StrictModes no',
      'UsePAM no',
      'PasswordAuthentication yes',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin yes',
      `AllowUsers ${allowUsers.join(' ')}`,
      '',
    ].join('\n'),
  );
  // sshd's privilege separation directory; a fresh machine has none until the service first ran.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const child = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  await untilListening(child, port, () => log);
  return {
    port,
    knownHostsFile: join(dir, 'known_hosts'),
    userKeyFile: join(dir, 'user_key'),
    wrongKnownHostsFile: join(dir, 'wrong_known_hosts'),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
