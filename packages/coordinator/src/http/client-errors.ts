import type { Socket } from 'node:net';

/** Node's parser errors for a request it could not read; the rest are bad requests too. */
const TOO_LARGE = new Set(['HPE_HEADER_OVERFLOW']);

/**
 * A request Node's HTTP parser refuses (a request line or headers over its 16 KiB limit,
 * malformed framing) never reaches the app, and Node's own answer has no body. The contract
 * promises `{code, message}` on every error, so the answer is written here.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const tooLarge = error.code !== undefined && TOO_LARGE.has(error.code);
  const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
  const message = tooLarge ? 'the request line and headers are larger than the server reads (16 KiB)' : 'the request could not be parsed as HTTP';
  const body = JSON.stringify({ code: 'bad_request', message });
  socket.end(`HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}
