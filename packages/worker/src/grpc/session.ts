import * as grpc from '@grpc/grpc-js';
import type { SessionFrame } from '@trellis/core/protocol';
import { toError } from '@trellis/core/protocol';

/** A call in flight that can be abandoned (long polls, at shutdown). */
export interface PendingCall<Res> {
  response: Promise<Res>;
  cancel(): void;
}

type SessionStream = grpc.ClientDuplexStream<SessionFrame, SessionFrame>;

interface Waiting {
  resolve(value: unknown): void;
  reject(error: grpc.ServiceError): void;
  timer: NodeJS.Timeout;
  deserialize(payload: Buffer): unknown;
}

/** An error shaped as grpc-js shapes a failed call's, so callers treat both alike. */
export function callError(code: grpc.status, details: string): grpc.ServiceError {
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata: new grpc.Metadata() });
}

/**
 * Larger requests (report batches with much log output) go as unary calls: frames on one
 * stream travel strictly in order, and a heartbeat must not wait behind megabytes of logs.
 */
const MAX_FRAME_PAYLOAD = 64 * 1024;

const frame = (fields: Partial<SessionFrame> & { id: number }): SessionFrame => ({ method: '', payload: Buffer.alloc(0), code: 0, message: '', cancel: false, ...fields });

/**
 * Calls multiplexed on the Session stream (see the .proto): two frames per call instead of an
 * HTTP/2 stream each. The stream opens on the first call and again after it breaks; when it
 * breaks, every call on it fails with UNAVAILABLE (or the refusal the coordinator gave), as a
 * unary call would when the connection drops. A coordinator without Session answers
 * UNIMPLEMENTED, after which `unsupported` is set and the caller uses unary calls.
 */
export class Session {
  private stream: SessionStream | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private lastId = 0;
  unsupported = false;

  constructor(
    private readonly open: () => SessionStream,
    private readonly service: grpc.ServiceDefinition,
  ) {}

  /** The call on the session; undefined when its request is too large for a frame. */
  call(method: string, request: unknown, timeoutMs: number): PendingCall<unknown> | undefined {
    const definition = this.service[method];
    if (definition === undefined) throw new Error(`no RPC ${method}`);
    const payload = definition.requestSerialize(request);
    if (payload.length > MAX_FRAME_PAYLOAD) return undefined;
    const stream = this.stream ?? this.connect();
    this.lastId = this.lastId >= 0xffff_ffff ? 1 : this.lastId + 1;
    const id = this.lastId;
    const response = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => this.giveUp(id, grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'), timeoutMs);
      this.waiting.set(id, { resolve, reject, timer, deserialize: definition.responseDeserialize });
    });
    stream.write(frame({ id, method, payload }));
    return { response, cancel: () => this.giveUp(id, grpc.status.CANCELLED, 'Cancelled on client') };
  }

  /** Ends the stream; calls still waiting fail with `code` (CANCELLED: the caller gave up on them). */
  close(code: grpc.status = grpc.status.CANCELLED, details = 'the client closed'): void {
    const stream = this.stream;
    this.stream = undefined;
    this.failAll(code, details);
    stream?.end();
  }

  private connect(): SessionStream {
    const stream = this.open();
    stream.on('data', (answer: SessionFrame) => this.answered(answer));
    stream.on('error', (error: grpc.ServiceError) => this.broken(stream, error));
    stream.on('end', () => this.broken(stream, undefined));
    this.stream = stream;
    return stream;
  }

  private answered(answer: SessionFrame): void {
    const waiting = this.take(answer.id);
    if (waiting === undefined) return;
    if (answer.code !== 0) return waiting.reject(callError(answer.code, answer.message));
    try {
      waiting.resolve(waiting.deserialize(answer.payload));
    } catch (error) {
      waiting.reject(callError(grpc.status.INTERNAL, `malformed answer: ${toError(error).message}`));
    }
  }

  /** The caller stopped waiting: the coordinator is told, so a long poll releases what it holds. */
  private giveUp(id: number, code: grpc.status, details: string): void {
    const waiting = this.take(id);
    if (waiting === undefined) return;
    waiting.reject(callError(code, details));
    if (this.stream?.writable === true) this.stream.write(frame({ id, cancel: true }));
  }

  private broken(stream: SessionStream, error: grpc.ServiceError | undefined): void {
    if (this.stream !== stream) return;
    this.stream = undefined;
    if (error?.code === grpc.status.UNIMPLEMENTED) this.unsupported = true;
    const refused = error?.code === grpc.status.UNAUTHENTICATED || error?.code === grpc.status.PERMISSION_DENIED;
    this.failAll(refused ? error.code : grpc.status.UNAVAILABLE, error?.details ?? 'the coordinator ended the session');
    if (error === undefined) stream.end();
  }

  private failAll(code: grpc.status, details: string): void {
    for (const id of [...this.waiting.keys()]) this.take(id)?.reject(callError(code, details));
  }

  private take(id: number): Waiting | undefined {
    const waiting = this.waiting.get(id);
    if (waiting === undefined) return undefined;
    this.waiting.delete(id);
    clearTimeout(waiting.timer);
    return waiting;
  }
}
