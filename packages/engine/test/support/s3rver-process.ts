import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

/**
 * s3rver (an S3-protocol server) in a child Node process of its own. Its ListObjectsV2
 * continuation tokens are DES-encrypted, which OpenSSL 3 offers only in its legacy provider:
 * in the test's own process every truncated page would be an internal error.
 */
export interface S3rverProcess {
  endpoint: string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 20_000;

export async function startS3rver(directory: string, bucket: string): Promise<S3rverProcess> {
  const bin = createRequire(import.meta.url).resolve('s3rver/bin/s3rver.js');
  const child = spawn(process.execPath, ['--openssl-legacy-provider', bin, '-d', directory, '-a', '127.0.0.1', '-p', '0', '--silent', '--no-vhost-buckets', '--configure-bucket', bucket], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`s3rver did not start within ${START_TIMEOUT_MS} ms: ${output}`)), START_TIMEOUT_MS);
      const onData = (chunk: Buffer): void => {
        output += chunk.toString('utf8');
        const listening = /S3rver listening on [\d.]+:(\d+)/.exec(output);
        if (listening === null) return;
        clearTimeout(timer);
        resolve(Number(listening[1]));
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`s3rver exited (${code}): ${output}`));
      });
    });
    return { endpoint: `http://127.0.0.1:${port}`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
