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

/** A step's status change (`event: node`, sent when the stream was opened with `nodes=true`). */
export interface NodeEvent {
  type: string;
  dagName: string;
  dagRunId: string;
  attemptId: string;
  stepName: string;
  /** A lifecycle handler (onSuccess, onExit, …), not one of the steps. */
  handler: boolean;
  status?: number;
  statusLabel: string;
  startedAt: string;
  finishedAt: string;
  retryCount: number;
  doneCount: number;
  error: string;
  occurredAt: string;
}

export type StreamEvent = { name: 'run'; data: RunEvent } | { name: 'node'; data: NodeEvent };

const RECONNECT_MS = 2000;

function parseFrame(frame: string): { id?: string; event?: string; data?: string } {
  const out: { id?: string; event?: string; data?: string } = {};
  for (const line of frame.split('\n')) {
    if (line.startsWith('id: ')) out.id = line.slice(4);
    else if (line.startsWith('event: ')) out.event = line.slice(7);
    else if (line.startsWith('data: ')) out.data = (out.data !== undefined ? `${out.data}\n` : '') + line.slice(6);
  }
  return out;
}

function toStreamEvent(name: string | undefined, data: string): StreamEvent | undefined {
  if (name === 'node') return { name, data: JSON.parse(data) as NodeEvent };
  if (name === 'run') return { name, data: JSON.parse(data) as RunEvent };
  return undefined;
}

/**
 * Follows a server-sent event stream of run (and step) changes. Read with fetch rather than
 * EventSource: EventSource cannot send the Authorization header. Reconnects after a drop and
 * resumes with Last-Event-ID, so no change is missed in between. `onOpen` is called each time
 * the stream is open (the server subscribes before it answers): a page that loaded its data
 * before that moment loads it again then, so a change made in between is not missed either.
 * Returns the unsubscribe function.
 */
export function followRunEvents(path: string, onEvent: (event: StreamEvent) => void, onOpen?: () => void): () => void {
  const controller = new AbortController();
  let lastId: string | undefined;
  const connect = async (): Promise<void> => {
    const headers: Record<string, string> = { accept: 'text/event-stream', ...authorizationHeader() };
    if (lastId !== undefined) headers['last-event-id'] = lastId;
    const res = await fetch(`${apiPath}${path}`, { headers, signal: controller.signal });
    if (!res.ok || res.body === null) return;
    onOpen?.();
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
        const event = frame.data !== undefined ? toStreamEvent(frame.event, frame.data) : undefined;
        if (event !== undefined) onEvent(event);
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
