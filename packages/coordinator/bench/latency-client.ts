// The bench's HTTP client in a process of its own (see bench-processes.ts), so no coordinator
// shares its event loop: each `measure` message runs `inFlight` requests at a time and answers
// with the latency of each measured one (body read and checked included).
import { Agent, get } from 'node:http';
import { toError } from '@trellis/core';
import type { AnswerCheck, ChildMessage, Measurement } from './bench-processes.js';

const send = (message: ChildMessage): void => void process.send?.(message);

// node:http rather than fetch: with fetch this process spent 1.6 ms of CPU per 80 KB DAG list
// page, almost what the coordinator spent answering it; with node:http 0.8 ms. On a 2-core
// machine the client's CPU is taken from the coordinator and PostgreSQL it measures.
// Idle sockets are dropped after 2 s, before the coordinator's 5 s keep-alive can close one under a
// request (the list bench seeds for half a minute between two measurements).
const agent = new Agent({ keepAlive: true, maxSockets: 64, timeout: 2_000 });

/** One GET, the status and the whole body as text. */
function getText(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

function passes(check: AnswerCheck, page: Record<string, unknown>): boolean {
  const content = typeof page.content === 'string' ? page.content : '';
  switch (check.kind) {
    case 'dags':
      return Array.isArray(page.dags) && page.dags.length === check.count;
    case 'runs':
      return Array.isArray(page.dagRuns) && page.dagRuns.length === check.count;
    case 'lastLine':
      return page.totalLines === check.totalLines && content.endsWith(check.line);
    case 'someLines':
      return typeof page.totalLines === 'number' && page.totalLines > 0;
    case 'lineCount':
      return content.split('\n').length === check.count;
  }
}

function pathOf(m: Measurement, i: number): string {
  const path = typeof m.path === 'string' ? m.path : (m.path[i % m.path.length] ?? '');
  return m.offsetRange === undefined ? path : path.replace('{offset}', String(1 + ((i * 7919 * 211) % m.offsetRange)));
}

async function measure(m: Measurement): Promise<number[]> {
  const times: number[] = [];
  const total = m.warmup + m.measured;
  let next = 0;
  await Promise.all(
    Array.from({ length: m.inFlight }, async () => {
      while (next < total) {
        const i = next;
        next += 1;
        const started = performance.now();
        const { status, text } = await getText(m.url + pathOf(m, i));
        if (i >= m.warmup) times.push(performance.now() - started);
        if (status !== 200 || !passes(m.check, JSON.parse(text) as Record<string, unknown>)) throw new Error(`${pathOf(m, i)}: unexpected answer (HTTP ${status}) ${text.slice(0, 100)}`);
      }
    }),
  );
  return times;
}

process.on('message', (message: { type: string; measurement?: Measurement }) => {
  if (message.type === 'stop') return process.disconnect();
  if (message.type !== 'measure' || message.measurement === undefined) return;
  measure(message.measurement).then(
    (times) => send({ type: 'times', times }),
    (error: unknown) => send({ type: 'failed', message: toError(error).message }),
  );
});
send({ type: 'listening' });
