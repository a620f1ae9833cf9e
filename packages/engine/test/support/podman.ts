import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync, copyFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { tempDir } from './run-yaml.js';

/**
 * Podman's Docker-compatible API on a socket of the test's own, with its own storage. Podman 4.3
 * serves it here only with runc as runtime and default ulimits inside the hard limits, set
 * through CONTAINERS_CONF. The image is a busybox root made from Debian's busybox-static.
 */
export interface PodmanService {
  dockerHost: string;
  image: string;
  /** Runs the podman CLI against this service's storage. */
  podman(args: string[]): string;
  /** Builds an image from `containerfile` (Docker format, which keeps HEALTHCHECK); returns its name. */
  build(name: string, containerfile: string): string;
  stop(): Promise<void>;
}

const APPLETS = ['sh', 'sleep', 'echo', 'cat', 'ls', 'env', 'id', 'pwd', 'touch', 'true', 'false', 'printf', 'kill', 'test', '['];

function ping(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping' }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('error', () => resolve(false));
    req.end();
  });
}

/**
 * The processes still running with `dir` in their command line: podman leaves an exec session's
 * conmon behind once its container is gone with the storage, and nothing else would ever end it.
 */
function processesUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir)) pids.push(Number(entry));
    } catch {
      // Ended while the list was read.
    }
  }
  return pids;
}

function endProcessesUnder(dir: string): void {
  for (const pid of processesUnder(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}

/** How often the storage reset at stop is tried. */
const RESET_ATTEMPTS = 5;

export async function startPodman(): Promise<PodmanService> {
  const dir = tempDir('trellis-podman-');
  const conf = join(dir, 'containers.conf');
  writeFileSync(conf, '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n[engine]\nruntime = "runc"\n');
  const env = { ...process.env, CONTAINERS_CONF: conf };
  const base = ['--root', join(dir, 'root'), '--runroot', join(dir, 'run'), '--tmpdir', join(dir, 'tmp')];
  const podman = (args: string[]): string => execFileSync('podman', [...base, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const rootfs = join(dir, 'rootfs');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  mkdirSync(join(rootfs, 'tmp'));
  copyFileSync('/usr/bin/busybox', join(rootfs, 'bin', 'busybox'));
  for (const applet of APPLETS) symlinkSync('busybox', join(rootfs, 'bin', applet));
  execFileSync('tar', ['-C', rootfs, '-cf', join(dir, 'rootfs.tar'), '.']);
  const image = 'localhost/trellis-busybox:test';
  podman(['import', '--change', 'ENV PATH=/bin', join(dir, 'rootfs.tar'), image]);
  const socket = join(dir, 'docker.sock');
  const service = spawn('podman', [...base, 'system', 'service', '--time=0', `unix://${socket}`], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  service.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  for (let i = 0; !(await ping(socket)); i += 1) {
    if (service.exitCode !== null || i > 200) throw new Error(`podman system service did not answer: ${log}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    dockerHost: `unix://${socket}`,
    image,
    podman,
    build: (name, containerfile) => {
      const context = join(dir, `build-${name}`);
      mkdirSync(context);
      writeFileSync(join(context, 'Containerfile'), containerfile);
      const tag = `localhost/${name}:test`;
      podman(['build', '--format', 'docker', '-t', tag, context]);
      return tag;
    },
    stop: async () => {
      if (service.exitCode === null) {
        const exited = new Promise((resolve) => service.once('exit', resolve));
        service.kill('SIGTERM');
        await exited;
      }
      // Containers and their overlay mounts go with the storage; a plain delete cannot unmount them.
      // A container's cleanup process may still be writing its events as the reset empties them
      // ("unlinkat .../tmp/events: directory not empty"): it is tried again once that has settled.
      for (let attempt = 1; ; attempt += 1) {
        try {
          podman(['system', 'reset', '--force']);
          endProcessesUnder(dir);
          return;
        } catch (error) {
          if (attempt === RESET_ATTEMPTS) throw error;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    },
  };
}

/** A test file's podman service, with what its tests need to reach and inspect it. */
export interface PodmanFixture {
  /** The service; set once the file's `before` hook has run. */
  readonly service: PodmanService;
  /** A host environment for runs whose containers go to this service. */
  readonly hostEnv: () => Record<string, string>;
  /** Names of the service's containers, running or not. */
  readonly containers: () => string[];
}

/** Starts a podman service before the calling test file's tests and stops it after them. */
export function podmanForFile(): PodmanFixture {
  let started: PodmanService | undefined;
  const service = (): PodmanService => {
    if (started === undefined) throw new Error('podman is not started yet: use the fixture inside tests');
    return started;
  };
  before(async () => {
    started = await startPodman();
  });
  after(async () => {
    await started?.stop();
  });
  return {
    get service() {
      return service();
    },
    hostEnv: () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tempDir('trellis-home-'), DOCKER_HOST: service().dockerHost }),
    containers: () => service().podman(['ps', '-a', '--format', '{{.Names}}']).split('\n').filter(Boolean),
  };
}
