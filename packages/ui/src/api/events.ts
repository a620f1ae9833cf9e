import { apiPath, authorizationHeader } from './client';

/** One frame of the coordinator's run event stream (`event: run`). */
export interface RunEvent {
  type: string;
  dagName: string;
  dagRunId: string;
  status?: number;
  statusLabel: string;
  occurredAt: string;
}

const RECONNECT_MS = 2000;

function parseFrame(frame: string): { id?: string; data?: string } {
  const out: { id?: string; data?: string } = {};
  for (const line of frame.split('\n')) {
    if (line.startsWith('id: ')) out.id = line.slice(4);
    else if (line.startsWith('data: ')) out.data = (out.data !== undefined ? `${out.data}\n` : '') + line.slice(6);
  }
  return out;
}

/**
 * Follows a server-sent event stream of run changes. Read with fetch rather than EventSource:
 * EventSource cannot send the Authorization header. Reconnects after a drop and resumes with
 * Last-Event-ID, so no change is missed in between. Returns the unsubscribe function.
 */
export function followRunEvents(path: string, onEvent: (event: RunEvent) => void): () => void {
  const controller = new AbortController();
  let lastId: string | undefined;
  const connect = async (): Promise<void> => {
    const headers: Record<string, string> = { accept: 'text/event-stream', ...authorizationHeader() };
    if (lastId !== undefined) headers['last-event-id'] = lastId;
    const res = await fetch(`${apiPath}${path}`, { headers, signal: controller.signal });
    if (!res.ok || res.body === null) return;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = parseFrame(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (frame.id !== undefined) lastId = frame.id;
        if (frame.data !== undefined) onEvent(JSON.parse(frame.data) as RunEvent);
      }
    }
  };
  const loop = async (): Promise<void> => {
    while (!controller.signal.aborted) {
      await connect().catch(() => undefined);
      if (!controller.signal.aborted) await new Promise((r) => setTimeout(r, RECONNECT_MS));
    }
  };
  void loop();
  return () => controller.abort();
}
