import { connect } from 'node:net';

/**
 * Sends `text` as it is to the server of `url` and reads the whole answer, headers and all, until
 * the server closes the connection: what fetch would hide (a body sent with a HEAD answer) or
 * change (it adds `Cache-Control: no-cache` to conditional requests), and requests fetch cannot make.
 */
export function rawHttp(url: string, text: string): Promise<string> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}
