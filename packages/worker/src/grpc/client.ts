import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  PROTO_FILE, PROTO_LOADER_OPTIONS, WORKER_AUTH_METADATA,
  type AckTaskRequest, type AckTaskResponse, type HeartbeatRequest, type HeartbeatResponse, type PollRequest, type PollResponse,
  type RegisterRequest, type RegisterResponse, type ReportRequest, type ReportResponse, type StartSubRunRequest, type StartSubRunResponse,
  type SessionFrame, type StopSubRunRequest, type StopSubRunResponse, type WaitRunRequest, type WaitRunResponse,
} from '@trellis/core';
import type { WorkerConfig } from '../config.js';
import { Session, type PendingCall } from './session.js';

export type { PendingCall } from './session.js';

type Callback<Res> = (error: grpc.ServiceError | null, response?: Res) => void;
type RawMethod = (request: unknown, metadata: grpc.Metadata, options: grpc.CallOptions, callback: Callback<unknown>) => grpc.ClientUnaryCall;

interface Methods {
  Register: [RegisterRequest, RegisterResponse];
  Poll: [PollRequest, PollResponse];
  AckTask: [AckTaskRequest, AckTaskResponse];
  Heartbeat: [HeartbeatRequest, HeartbeatResponse];
  Report: [ReportRequest, ReportResponse];
  StartSubRun: [StartSubRunRequest, StartSubRunResponse];
  WaitRun: [WaitRunRequest, WaitRunResponse];
  StopSubRun: [StopSubRunRequest, StopSubRunResponse];
}

interface ClientPackage {
  trellis: { coordinator: { v1: { Coordinator: grpc.ServiceClientConstructor } } };
}


function channelCredentials(config: WorkerConfig): grpc.ChannelCredentials {
  if (config.tlsCa === undefined && config.tlsCert === undefined) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(
    config.tlsCa !== undefined ? readFileSync(config.tlsCa) : null,
    config.tlsKey !== undefined ? readFileSync(config.tlsKey) : null,
    config.tlsCert !== undefined ? readFileSync(config.tlsCert) : null,
  );
}

/**
 * The coordinator's gRPC service, with the worker token on every call. Calls travel on the
 * Session stream; a coordinator that does not offer it gets unary calls.
 */
export class CoordinatorClient {
  private readonly client: grpc.Client;
  private readonly metadata = new grpc.Metadata();
  private readonly session: Session;

  constructor(config: WorkerConfig) {
    const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_FILE, PROTO_LOADER_OPTIONS)) as unknown as ClientPackage;
    this.client = new pkg.trellis.coordinator.v1.Coordinator(config.coordinator, channelCredentials(config), {
      // Reconnect quickly when the coordinator comes back; jitter is added by grpc-js.
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': 3000,
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 5_000,
    });
    if (config.token !== undefined) this.metadata.set(WORKER_AUTH_METADATA, `Bearer ${config.token}`);
    const open = (): grpc.ClientDuplexStream<SessionFrame, SessionFrame> => (this.client as unknown as { Session(metadata: grpc.Metadata): grpc.ClientDuplexStream<SessionFrame, SessionFrame> }).Session(this.metadata);
    this.session = new Session(open, pkg.trellis.coordinator.v1.Coordinator.service);
  }

  call<M extends keyof Methods>(method: M, request: Methods[M][0], timeoutMs: number): PendingCall<Methods[M][1]> {
    const framed = this.session.unsupported ? undefined : this.session.call(method, request, timeoutMs);
    if (framed !== undefined) return framed as PendingCall<Methods[M][1]>;
    let call: grpc.ClientUnaryCall | undefined;
    const response = new Promise<Methods[M][1]>((resolve, reject) => {
      const fn = (this.client as unknown as Record<string, RawMethod>)[method];
      if (fn === undefined) throw new Error(`no RPC ${method}`);
      call = fn.call(this.client, request, this.metadata, { deadline: Date.now() + timeoutMs }, (error, value) => {
        if (error !== null) reject(error);
        else resolve(value as Methods[M][1]);
      });
    });
    return { response, cancel: () => call?.cancel() };
  }

  /** The common case: call and wait. */
  request<M extends keyof Methods>(method: M, request: Methods[M][0], timeoutMs = 10_000): Promise<Methods[M][1]> {
    return this.call(method, request, timeoutMs).response;
  }

  close(): void {
    this.session.close();
    this.client.close();
  }
}

export function grpcCode(error: unknown): grpc.status | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? (error as grpc.ServiceError).code : undefined;
}

export { status as GrpcStatus } from '@grpc/grpc-js';
