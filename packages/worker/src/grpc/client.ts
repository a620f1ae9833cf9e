import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { WORKER_AUTH_METADATA, type CoordinatorMethod, type CoordinatorMethods, type CoordinatorPackage, type SessionFrame } from '@trellis/core/protocol';
import type { WorkerConfig } from '../config.js';
import { coordinatorClientConstructor } from './coordinator-service.js';
import { Session, type PendingCall } from './session.js';

export type { PendingCall } from './session.js';

type Callback<Res> = (error: grpc.ServiceError | null, response?: Res) => void;
type RawMethod = (request: unknown, metadata: grpc.Metadata, options: grpc.CallOptions, callback: Callback<unknown>) => grpc.ClientUnaryCall;

type Request<M extends CoordinatorMethod> = CoordinatorMethods[M]['request'];
type Response<M extends CoordinatorMethod> = CoordinatorMethods[M]['response'];

function channelCredentials(config: WorkerConfig): grpc.ChannelCredentials {
  if (config.tlsCa === undefined && config.tlsCert === undefined) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(
    config.tlsCa !== undefined ? readFileSync(config.tlsCa) : null,
    config.tlsKey !== undefined ? readFileSync(config.tlsKey) : null,
    config.tlsCert !== undefined ? readFileSync(config.tlsCert) : null,
  );
}

type GrpcClientConstructor = CoordinatorPackage['trellis']['coordinator']['v1']['Coordinator'];
type GrpcClient = InstanceType<GrpcClientConstructor>;

/** One coordinator's channel and the Session stream on it. */
interface Connection {
  address: string;
  client: GrpcClient;
  session: Session;
}

/**
 * The coordinator's gRPC service, with the worker token on every call. Calls travel on the
 * Session stream; a coordinator that does not offer it gets unary calls. With several
 * coordinators configured, calls go to one at a time until `failover` moves them to the next.
 */
export class CoordinatorClient {
  private readonly clientConstructor: GrpcClientConstructor;
  private readonly credentials: grpc.ChannelCredentials;
  private readonly metadata = new grpc.Metadata();
  private index = 0;
  private connection: Connection;

  constructor(private readonly config: WorkerConfig) {
    this.clientConstructor = coordinatorClientConstructor();
    this.credentials = channelCredentials(config);
    if (config.token !== undefined) this.metadata.set(WORKER_AUTH_METADATA, `Bearer ${config.token}`);
    this.connection = this.connect(config.coordinators[0] ?? '');
  }

  /** The coordinator calls go to now. */
  get address(): string {
    return this.connection.address;
  }

  /** Whether there is another coordinator to move to. */
  get canFailOver(): boolean {
    return this.config.coordinators.length > 1;
  }

  /**
   * Moves to the next coordinator (round robin). Calls in flight on the one left fail as
   * UNAVAILABLE, so their callers retry them on the new one like after any lost connection.
   */
  failover(): string {
    const previous = this.connection;
    this.index = (this.index + 1) % this.config.coordinators.length;
    this.connection = this.connect(this.config.coordinators[this.index] ?? '');
    previous.session.close(grpc.status.UNAVAILABLE, `moved from coordinator ${previous.address} to ${this.connection.address}`);
    previous.client.close();
    return this.connection.address;
  }

  private connect(address: string): Connection {
    const client = new this.clientConstructor(address, this.credentials, {
      // Reconnect quickly when the coordinator comes back; jitter is added by grpc-js.
      'grpc.initial_reconnect_backoff_ms': 200,
      'grpc.max_reconnect_backoff_ms': 3000,
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 5_000,
    });
    const open = (): grpc.ClientDuplexStream<SessionFrame, SessionFrame> => client.Session(this.metadata);
    return { address, client, session: new Session(open, this.clientConstructor.service) };
  }

  call<M extends CoordinatorMethod>(method: M, request: Request<M>, timeoutMs: number): PendingCall<Response<M>> {
    const { client, session } = this.connection;
    const framed = session.unsupported ? undefined : session.call(method, request, timeoutMs);
    if (framed !== undefined) return framed;
    let call: grpc.ClientUnaryCall | undefined;
    const response = new Promise<Response<M>>((resolve, reject) => {
      const fn = (client as unknown as Record<string, RawMethod>)[method];
      if (fn === undefined) throw new Error(`no RPC ${method}`);
      call = fn.call(client, request, this.metadata, { deadline: Date.now() + timeoutMs }, (error, value) => {
        if (error !== null) reject(error);
        else resolve(value);
      });
    });
    return { response, cancel: () => call?.cancel() };
  }

  /** The common case: call and wait. */
  request<M extends CoordinatorMethod>(method: M, request: Request<M>, timeoutMs = 10_000): Promise<Response<M>> {
    return this.call(method, request, timeoutMs).response;
  }

  close(): void {
    this.connection.session.close();
    this.connection.client.close();
  }
}

export function grpcCode(error: unknown): grpc.status | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? (error as grpc.ServiceError).code : undefined;
}

/**
 * The one test of whether a failed call means the coordinator is away (down, restarting,
 * unreachable, or too slow to answer in time): such a call is retried. Any other code is the
 * coordinator's answer, and retrying the same request would get the same one.
 */
export function isCoordinatorAway(error: unknown): boolean {
  const code = grpcCode(error);
  return code === grpc.status.UNAVAILABLE || code === grpc.status.DEADLINE_EXCEEDED;
}

export { status as GrpcStatus } from '@grpc/grpc-js';
