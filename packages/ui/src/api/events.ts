import { ApiError, apiPath, authorizationHeader, toApiError } from './client';

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

interface Frame {
  id?: string;
  event?: string;
  data?: string;
}

function parseFrame(frame: string): Frame {
  const out: Frame = {};
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
 * Opens a server-sent event stream (read with fetch rather than EventSource: EventSource cannot
 * send the Authorization header), resuming after `lastId`. An answer that is not a stream (the
 * run does not exist, access refused) throws an ApiError with the server's message.
 */
async function openStream(path: string, lastId: string | undefined, signal: AbortSignal): Promise<ReadableStream<string>> {
  const headers: Record<string, string> = { accept: 'text/event-stream', ...authorizationHeader() };
  if (lastId !== undefined) headers['last-event-id'] = lastId;
  const res = await fetch(`${apiPath}${path}`, { headers, signal });
  if (!res.ok || res.body === null) throw toApiError(res.status, await res.json().catch(() => undefined));
  return res.body.pipeThrough(new TextDecoderStream());
}

/** Calls `onFrame` with each frame of an open stream until it ends. */
async function readFrames(body: ReadableStream<string>, onFrame: (frame: Frame) => void): Promise<void> {
  const reader = body.getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      onFrame(parseFrame(buffer.slice(0, end)));
      buffer = buffer.slice(end + 2);
    }
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Follows a server-sent event stream of run (and step) changes. Reconnects after a drop and
 * resumes with Last-Event-ID, so no change is missed in between. `onOpen` is called each time
 * the stream is open (the server subscribes before it answers): a page that loaded its data
 * before that moment loads it again then, so a change made in between is not missed either.
 * Returns the unsubscribe function.
 */
export function followRunEvents(path: string, onEvent: (event: StreamEvent) => void, onOpen?: () => void): () => void {
  const controller = new AbortController();
  let lastId: string | undefined;
  const connect = async (): Promise<void> => {
    const body = await openStream(path, lastId, controller.signal);
    onOpen?.();
    await readFrames(body, (frame) => {
      if (frame.id !== undefined) lastId = frame.id;
      const event = frame.data !== undefined ? toStreamEvent(frame.event, frame.data) : undefined;
      if (event !== undefined) onEvent(event);
    });
  };
  const loop = async (): Promise<void> => {
    while (!controller.signal.aborted) {
      await connect().catch(() => undefined);
      if (!controller.signal.aborted) await pause(RECONNECT_MS);
    }
  };
  void loop();
  return () => controller.abort();
}

export interface LogHandlers {
  /** New text of attempt `attemptId`'s log; a new attempt's text starts from its log's start. */
  onText: (attemptId: string, text: string) => void;
  /** The run ended and all its log was sent. */
  onEnd: (statusLabel: string) => void;
  /** The stream failed (it is tried again unless the server refused it) or is open again (undefined). */
  onError: (error: Error | undefined) => void;
}

/**
 * Follows a log event stream (`log` events, then `end`) until the run ends or the returned
 * function is called. A dropped stream is opened again after the last event seen, so no text is
 * lost or repeated; one the server refuses (4xx: no such run or step, no access) is not.
 */
export function followLog(path: string, handlers: LogHandlers): () => void {
  const controller = new AbortController();
  let lastId: string | undefined;
  let ended = false;
  const connect = async (): Promise<void> => {
    const body = await openStream(path, lastId, controller.signal);
    handlers.onError(undefined);
    await readFrames(body, (frame) => {
      if (frame.data === undefined) return;
      if (frame.event === 'log') {
        const update = JSON.parse(frame.data) as { attemptId: string; content: string };
        if (frame.id !== undefined) lastId = frame.id;
        handlers.onText(update.attemptId, update.content);
      } else if (frame.event === 'end') {
        ended = true;
        handlers.onEnd((JSON.parse(frame.data) as { statusLabel: string }).statusLabel);
      }
    });
  };
  const loop = async (): Promise<void> => {
    while (!controller.signal.aborted && !ended) {
      const failure = await connect().then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
      );
      if (controller.signal.aborted || ended) return;
      if (failure !== undefined) handlers.onError(failure);
      if (failure instanceof ApiError && failure.status >= 400 && failure.status < 500) return;
      await pause(RECONNECT_MS);
    }
  };
  void loop();
  return () => controller.abort();
}
