import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { toError, type SessionFrame } from '@trellis/core';
import type { Logger } from '../logging/logger.js';
import { hasValidToken, type GrpcSecurity } from './auth.js';
import type { CallContext, Unary } from './call-context.js';
import { failureStatus } from './call-status.js';

/** One call on a session: cancelled when the worker gives up on it or the stream ends. */
class FrameCall extends EventEmitter implements CallContext {
  cancelled = false;
  private givenUp: (() => void) | undefined;

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.emit('cancelled');
  }

  onGivenUpAfterAnswer(listener: () => void): void {
    this.givenUp = listener;
  }

  /** The worker's cancel crossed the answer: the worker will not use it. */
  givenUpAfterAnswer(): void {
    const listener = this.givenUp;
    this.givenUp = undefined;
    listener?.();
  }
}

/**
 * Answered calls kept so that a cancel frame arriving after the answer still reaches its call:
 * a worker never uses the answer to a call it gave up on, so what the answer handed out (a
 * lease) can go back at once. Bounded: a cancel later than that is covered by the ack timeout.
 */
const ANSWERED_KEPT = 256;

const answer = (id: number, fields: Partial<SessionFrame>): SessionFrame => ({ id, method: '', payload: Buffer.alloc(0), code: grpc.status.OK, message: '', cancel: false, ...fields });

export interface SessionService {
  handler: grpc.handleBidiStreamingCall<SessionFrame, SessionFrame>;
  /**
   * Shutdown: takes no new calls, gives up the long ones (polls, waits), and ends each session
   * once its calls in flight are answered, so the server can close without cutting answers.
   */
  drain(): void;
}

/** An answer frame for a handler's result; a result that cannot be encoded is INTERNAL, never a crash. */
function resultFrame(id: number, definition: grpc.MethodDefinition<unknown, unknown>, response: unknown, method: string, logger: Logger): SessionFrame {
  try {
    return answer(id, { payload: definition.responseSerialize(response) });
  } catch (error) {
    const status = failureStatus(error, method, logger);
    return answer(id, { code: status.code, message: status.details });
  }
}

/**
 * The Session RPC: the unary calls multiplexed on one stream. The token is checked once, when
 * the stream opens; each request frame runs the same handler as the unary call, and its answer
 * frame carries the response or the status the unary call would have ended with.
 */
export function sessionService(service: grpc.ServiceDefinition, unaries: Record<string, Unary>, security: GrpcSecurity, logger: Logger): SessionService {
  const open = new Set<() => void>();
  let draining = false;
  const handler: grpc.handleBidiStreamingCall<SessionFrame, SessionFrame> = (stream) => {
    if (!hasValidToken(stream.metadata, security.workerToken)) {
      logger.warn('worker session refused: bad or missing token', { peer: stream.getPeer() });
      stream.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'invalid worker token' });
      return;
    }
    const calls = new Map<number, FrameCall>();
    const answered = new Map<number, FrameCall>();
    const send = (frame: SessionFrame): void => {
      if (!stream.cancelled && stream.writable) stream.write(frame);
    };
    const endIfDrained = (): void => {
      if (draining && calls.size === 0 && stream.writable) stream.end();
    };
    const drain = (): void => {
      for (const call of calls.values()) call.cancel();
      endIfDrained();
    };
    const run = (frame: SessionFrame): void => {
      if (draining) return send(answer(frame.id, { code: grpc.status.UNAVAILABLE, message: 'the coordinator is shutting down' }));
      const handle = unaries[frame.method];
      const definition = service[frame.method];
      if (handle === undefined || definition === undefined) return send(answer(frame.id, { code: grpc.status.UNIMPLEMENTED, message: `no call ${frame.method} on a session` }));
      let request: unknown;
      try {
        request = definition.requestDeserialize(frame.payload);
      } catch (error) {
        return send(answer(frame.id, { code: grpc.status.INVALID_ARGUMENT, message: `malformed ${frame.method} request: ${toError(error).message}` }));
      }
      const call = new FrameCall();
      calls.set(frame.id, call);
      handle(request, stream.metadata, call)
        .then(
          (response) => send(resultFrame(frame.id, definition, response, frame.method, logger)),
          (error: unknown) => {
            const status = failureStatus(error, frame.method, logger);
            send(answer(frame.id, { code: status.code, message: status.details }));
          },
        )
        .finally(() => {
          calls.delete(frame.id);
          answered.set(frame.id, call);
          if (answered.size > ANSWERED_KEPT) answered.delete(answered.keys().next().value as number);
          endIfDrained();
        });
    };
    stream.on('data', (frame: SessionFrame) => {
      if (!frame.cancel) return run(frame);
      const live = calls.get(frame.id);
      if (live !== undefined) return live.cancel();
      answered.get(frame.id)?.givenUpAfterAnswer();
      answered.delete(frame.id);
    });
    const endAll = (): void => {
      open.delete(drain);
      for (const call of calls.values()) call.cancel();
    };
    open.add(drain);
    if (draining) drain();
    stream.on('cancelled', endAll);
    stream.on('error', endAll);
    stream.on('end', () => {
      endAll();
      stream.end();
    });
  };
  return {
    handler,
    drain: () => {
      draining = true;
      for (const drain of [...open]) drain();
    },
  };
}
