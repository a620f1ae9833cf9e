import { toError } from '@trellis/core/protocol';
/** A call the coordinator refused or could not answer: printed as is, exit code 1. */
export class ApiFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApiFailure';
  }
}

/** One server-sent event. */
export interface ServerEvent {
  event: string;
  data: string;
  id?: string;
}

type Query = Record<string, string | number | undefined>;

/** The coordinator's REST API as the client commands use it: JSON in, JSON out, errors as ApiFailure. */
export class ApiClient {
  private readonly base: string;
  private readonly authorization: Record<string, string>;

  /** `token`: sent as `Authorization: Bearer` with every call (a login token or an API key). */
  constructor(base: string, token?: string) {
    this.base = base.replace(/\/+$/, '');
    this.authorization = token !== undefined && token !== '' ? { authorization: `Bearer ${token}` } : {};
  }

  get(path: string, query: Query = {}): Promise<Record<string, unknown>> {
    return this.call('GET', path, query);
  }

  post(path: string, body: unknown = {}): Promise<Record<string, unknown>> {
    return this.call('POST', path, {}, body);
  }

  put(path: string, body: unknown): Promise<Record<string, unknown>> {
    return this.call('PUT', path, {}, body);
  }

  delete(path: string): Promise<Record<string, unknown>> {
    return this.call('DELETE', path, {});
  }

  /**
   * Opens a server-sent event stream. It resolves once the coordinator has answered, and the
   * coordinator subscribes before it answers, so no event after that moment is missed.
   */
  async events(path: string, signal: AbortSignal): Promise<AsyncIterable<ServerEvent>> {
    const res = await this.send(path, { headers: { accept: 'text/event-stream', ...this.authorization }, signal });
    if (!res.ok || res.body === null) throw await this.failure(res);
    return parseEvents(res.body);
  }

  private async call(method: string, path: string, query: Query, body?: unknown): Promise<Record<string, unknown>> {
    const res = await this.send(path + queryString(query), {
      method,
      headers: { 'content-type': 'application/json', ...this.authorization },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw await this.failure(res);
    const text = await res.text();
    try {
      return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
    } catch {
      throw new ApiFailure(`unexpected answer from ${this.base} (HTTP ${res.status})`);
    }
  }

  private async send(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(this.base + path, init);
    } catch (error) {
      const failure = toError(error);
      const cause = failure.cause instanceof Error ? failure.cause : undefined;
      throw new ApiFailure(`cannot reach ${this.base}: ${cause?.message ?? failure.message}`);
    }
  }

  /** The contract's error body {code, message} as one line. */
  private async failure(res: Response): Promise<ApiFailure> {
    const text = await res.text();
    try {
      const error = JSON.parse(text) as { code?: string; message?: string };
      return new ApiFailure(`${error.code ?? String(res.status)}: ${error.message ?? text}`);
    } catch {
      return new ApiFailure(`unexpected answer from ${this.base} (HTTP ${res.status})`);
    }
  }
}

function queryString(query: Query): string {
  const pairs = Object.entries(query).filter((pair): pair is [string, string | number] => pair[1] !== undefined);
  return pairs.length === 0 ? '' : `?${new URLSearchParams(pairs.map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
}

/** The text/event-stream format: blocks of `field: value` lines separated by a blank line. */
async function* parseEvents(body: ReadableStream<Uint8Array>): AsyncIterable<ServerEvent> {
  let buffer = '';
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    buffer += chunk.replace(/\r\n?/g, '\n');
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = parseBlock(block);
      if (event !== undefined) yield event;
    }
  }
}

function parseBlock(block: string): ServerEvent | undefined {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  }
  return data.length === 0 ? undefined : { event, data: data.join('\n'), ...(id !== undefined ? { id } : {}) };
}
