import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { PROTO_FILE, PROTO_LOADER_OPTIONS, ServiceUnavailableError, type CoordinatorPackage } from '@trellis/core';
import type { Logger } from '../logging/logger.js';
import { hasValidToken, serverCredentials, type GrpcSecurity } from './auth.js';
import type { WorkerHandlers } from './worker-service.js';
import type { Unary } from './call-context.js';
import { failureStatus } from './call-status.js';
import { sessionService } from './session.js';

export interface GrpcServer {
  /** Bound address, e.g. 127.0.0.1:50051. */
  address: string;
  close(): Promise<void>;
}

/** The worker port cannot be bound (in use, not permitted): the coordinator cannot serve workers. */
export class GrpcStartError extends ServiceUnavailableError {
  constructor(address: string, cause: Error) {
    super(`cannot listen for workers on ${address}: ${cause.message}`);
  }
}

/** Every RPC: the token is checked first, and a thrown error becomes a gRPC status with its message. */
function guarded(handler: Unary, security: GrpcSecurity, logger: Logger): grpc.handleUnaryCall<unknown, unknown> {
  return (call, callback) => {
    if (!hasValidToken(call.metadata, security.workerToken)) {
      logger.warn('worker call refused: bad or missing token', { peer: call.getPeer(), method: call.getPath() });
      callback({ code: grpc.status.UNAUTHENTICATED, details: 'invalid worker token' });
      return;
    }
    handler(call.request, call.metadata, call).then(
      (response) => callback(null, response),
      (error: unknown) => callback(failureStatus(error, call.getPath(), logger)),
    );
  };
}

/** Starts the worker-facing gRPC server; port 0 picks a free port. */
export async function startGrpcServer(host: string, port: number, security: GrpcSecurity, handlers: WorkerHandlers, logger: Logger): Promise<GrpcServer> {
  const definition = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_FILE, PROTO_LOADER_OPTIONS)) as unknown as CoordinatorPackage;
  const server = new grpc.Server({ 'grpc.keepalive_permit_without_calls': 1 });
  const service = definition.trellis.coordinator.v1.Coordinator.service;
  const unaries = handlers as unknown as Record<string, Unary>;
  const implementation: grpc.UntypedServiceImplementation = Object.fromEntries(Object.entries(unaries).map(([name, handler]) => [name, guarded(handler, security, logger)]));
  const sessions = sessionService(service, unaries, security, logger);
  implementation.Session = sessions.handler;
  server.addService(service, implementation);
  const wanted = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(wanted, serverCredentials(security), (error, actual) => (error !== null ? reject(new GrpcStartError(wanted, error)) : resolve(actual)));
  });
  const address = `${host.includes(':') ? `[${host}]` : host}:${bound}`;
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        // Sessions end once their answers are out; anything still open after 2 s is cut (workers resend).
        const force = setTimeout(() => server.forceShutdown(), 2000);
        sessions.drain();
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
