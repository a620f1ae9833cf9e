import type * as grpc from '@grpc/grpc-js';

/** What a handler may ask of its call (unary, or a frame on a Session): whether the worker gave up on it. */
export interface CallContext {
  readonly cancelled: boolean;
  once(event: 'cancelled', listener: () => void): unknown;
  /** Session frames only: the worker gave up on the call after its answer left, so it never used the answer. */
  onGivenUpAfterAnswer?(listener: () => void): void;
}

/** A worker-protocol handler as the server calls it: request in, response out. */
export type Unary = (request: unknown, metadata: grpc.Metadata, call: CallContext) => Promise<unknown>;
