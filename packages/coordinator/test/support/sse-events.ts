import assert from 'node:assert/strict';

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** Opens a server-sent event stream and yields its events as they come, until the server closes it. */
export async function* streamEvents(url: string, headers: Record<string, string> = {}): AsyncGenerator<SseEvent> {
  const res = await fetch(url, { headers });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  let text = '';
  const decoder = new TextDecoder();
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(part, { stream: true });
    for (let cut = text.indexOf('\n\n'); cut !== -1; cut = text.indexOf('\n\n')) {
      const block = text.slice(0, cut);
      text = text.slice(cut + 2);
      const fields = new Map(block.split('\n').filter((l) => !l.startsWith(':')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
      if (fields.has('event')) yield { ...(fields.has('id') ? { id: fields.get('id') } : {}), event: fields.get('event') ?? '', data: fields.get('data') ?? '' };
    }
  }
}

/** Reads events from `events` until `end` or the server closes the stream. */
export async function eventsUntilEnd(events: AsyncIterable<SseEvent>): Promise<SseEvent[]> {
  const read: SseEvent[] = [];
  for await (const event of events) {
    read.push(event);
    if (event.event === 'end') break;
  }
  return read;
}

/** Reads a server-sent event stream until `end` or the server closes it. */
export function readEvents(url: string, headers: Record<string, string> = {}): Promise<SseEvent[]> {
  return eventsUntilEnd(streamEvents(url, headers));
}
