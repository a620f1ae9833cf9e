// A real git smart-HTTP remote for sync tests: git's own `git http-backend` run as CGI behind a
// small Node HTTP server that checks a token (basic credentials whose password is the token, or
// a bearer token). `breakUploads` makes fetches fail half-way (the connection is cut after the
// first bytes of the pack), as a remote that goes away mid-pull. The "someone else" side works
// on clones made with the git CLI.
import { spawn, execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { AddressInfo } from 'node:net';

const HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';

export interface GitHttpRemote {
  /** http://127.0.0.1:<port>/repo.git */
  url: string;
  token: string;
  /** The bare repository on disk. */
  bareDir: string;
  /** Cuts every fetch's answer after its first bytes while true. */
  breakUploads: boolean;
  /** Requests refused for a wrong or missing token. */
  refused: number;
  /** A git CLI clone (through the file system), for the other side's commits and reads. */
  clone(name: string): GitClone;
  close(): Promise<void>;
}

export interface GitClone {
  dir: string;
  write(path: string, content: string): void;
  remove(path: string): void;
  /** Commits everything as `author` and pushes. */
  commitAndPush(message: string, author?: string): string;
  /** Pulls (fast-forward) and returns the file's content, or undefined. */
  read(path: string): string | undefined;
  git(...args: string[]): string;
}

const gitEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1', HOME: tmpdir() };

function run(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function authorised(header: string | undefined, token: string): boolean {
  if (header === undefined) return false;
  if (header.startsWith('Bearer ')) return header.slice('Bearer '.length) === token;
  if (!header.startsWith('Basic ')) return false;
  const decoded = Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8');
  return decoded.slice(decoded.indexOf(':') + 1) === token;
}

/** A bare repository on branch `main` holding `files` in its first commit, served on 127.0.0.1:0. */
export async function startGitHttpRemote(files: Record<string, string>, token = 'test-token-123'): Promise<GitHttpRemote> {
  const root = mkdtempSync(join(tmpdir(), 'trellis-git-'));
  const bareDir = join(root, 'repo.git');
  run(root, 'init', '--bare', '--initial-branch=main', bareDir);
  run(bareDir, 'config', 'http.receivepack', 'true');
  const seed = join(root, 'seed');
  run(root, 'clone', '--quiet', bareDir, seed);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(seed, path)), { recursive: true });
    writeFileSync(join(seed, path), content);
  }
  writeFileSync(join(seed, 'README.md'), '# sync test repository\n');
  run(seed, 'add', '-A');
  run(seed, '-c', 'user.name=Seeder', '-c', 'user.email=seeder@example.com', 'commit', '--quiet', '-m', 'initial');
  run(seed, 'push', '--quiet', 'origin', 'HEAD:main');

  const state = { breakUploads: false, refused: 0 };
  const server: Server = createServer((req, res) => {
    if (!authorised(req.headers.authorization, token)) {
      state.refused += 1;
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' });
      res.end('unauthorized');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const child = spawn(HTTP_BACKEND, [], {
      env: {
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        REQUEST_METHOD: req.method ?? 'GET',
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_USER: 'tester',
        REMOTE_ADDR: '127.0.0.1',
        ...(req.headers['content-encoding'] !== undefined ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
        ...(req.headers['git-protocol'] !== undefined ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
    });
    req.pipe(child.stdin);
    const breaking = state.breakUploads && url.pathname.endsWith('/git-upload-pack') && req.method === 'POST';
    let head = Buffer.alloc(0);
    let headersSent = false;
    let bodyBytes = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      if (headersSent) {
        bodyBytes += chunk.length;
        if (breaking && bodyBytes > 64) {
          res.socket?.destroy();
          child.kill();
          return;
        }
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = head.subarray(0, end).toString('utf8').split('\r\n');
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      headersSent = true;
      const rest = head.subarray(end + 4);
      bodyBytes = rest.length;
      if (breaking) {
        res.write(rest.subarray(0, 64));
        res.socket?.destroy();
        child.kill();
        return;
      }
      res.write(rest);
    });
    child.stdout.on('end', () => {
      if (!res.destroyed) res.end();
    });
    child.on('error', () => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let clones = 0;
  const remote: GitHttpRemote = {
    url: `http://127.0.0.1:${port}/repo.git`,
    token,
    bareDir,
    get breakUploads() {
      return state.breakUploads;
    },
    set breakUploads(value: boolean) {
      state.breakUploads = value;
    },
    get refused() {
      return state.refused;
    },
    set refused(value: number) {
      state.refused = value;
    },
    clone(name: string): GitClone {
      clones += 1;
      const dir = join(root, `clone-${clones}-${name}`);
      run(root, 'clone', '--quiet', bareDir, dir);
      const git = (...args: string[]) => run(dir, ...args);
      return {
        dir,
        git,
        write: (path, content) => {
          mkdirSync(dirname(join(dir, path)), { recursive: true });
          writeFileSync(join(dir, path), content);
        },
        remove: (path) => rmSync(join(dir, path)),
        commitAndPush: (message, author = 'Someone Else <someone@example.com>') => {
          git('add', '-A');
          const [authorName, authorEmail] = [author.slice(0, author.indexOf(' <')), author.slice(author.indexOf('<') + 1, -1)];
          git('-c', `user.name=${authorName}`, '-c', `user.email=${authorEmail}`, 'commit', '--quiet', '-m', message);
          git('push', '--quiet', 'origin', 'HEAD:main');
          return git('rev-parse', 'HEAD');
        },
        read: (path) => {
          git('pull', '--quiet', '--ff-only', 'origin', 'main');
          try {
            return git('show', `HEAD:${path}`);
          } catch {
            return undefined;
          }
        },
      };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    },
  };
  return remote;
}
