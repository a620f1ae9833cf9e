// The worker <-> coordinator vocabulary, derived from the types generated from
// protos/coordinator/v1/coordinator.proto (`npm run gen:proto`; a core test fails when the
// committed output is stale). Both sides use these names: nothing here is written by hand
// except which message field proto3 cannot mark required.
import type { MessageTypeDefinition, MethodDefinition } from '@grpc/proto-loader';
import type { ProtoGrpcType } from './generated/coordinator.js';
import type { CoordinatorDefinition } from './generated/trellis/coordinator/v1/Coordinator.js';

/** The loaded package (`grpc.loadPackageDefinition(...)`) with its service constructor and definition. */
export type CoordinatorPackage = ProtoGrpcType;

type V1 = ProtoGrpcType['trellis']['coordinator']['v1'];

/** The task reference of an attempt (`ref`, `parent`): proto3 cannot mark it required, but every message that has one sets it. */
type RefField = 'ref' | 'parent';

/** Message fields other than the task reference: null when received without them, left out when sent so. */
type AbsentField<T> = { [K in keyof T]-?: K extends RefField ? never : null extends T[K] ? K : never }[keyof T];

type Flat<T> = { [K in keyof T]: T[K] };

/**
 * A message as received with PROTO_LOADER_OPTIONS (every scalar present, int64 as number),
 * with its task reference set and its other message fields optional (PollResponse.task).
 */
type Received<T> = T extends Buffer
  ? T
  : T extends readonly (infer E)[]
    ? Received<E>[]
    : T extends object
      ? Flat<
          { [K in keyof Omit<T, AbsentField<T>>]: Received<K extends RefField ? NonNullable<Omit<T, AbsentField<T>>[K]> : Omit<T, AbsentField<T>>[K]> } & {
            [K in keyof Pick<T, AbsentField<T>>]?: Received<Pick<T, AbsentField<T>>[K]>;
          }
        >
      : T;

type Message<N extends keyof V1> = V1[N] extends MessageTypeDefinition<infer _Sent, infer Output> ? Received<Output> : never;

export type TaskRef = Message<'TaskRef'>;
export type RegisterRequest = Message<'RegisterRequest'>;
export type RegisterResponse = Message<'RegisterResponse'>;
export type PollRequest = Message<'PollRequest'>;
export type PollResponse = Message<'PollResponse'>;
export type Task = Message<'Task'>;
export type AckTaskRequest = Message<'AckTaskRequest'>;
export type AckTaskResponse = Message<'AckTaskResponse'>;
export type RunningTask = Message<'RunningTask'>;
export type HeartbeatRequest = Message<'HeartbeatRequest'>;
export type HeartbeatResponse = Message<'HeartbeatResponse'>;
/** RunCommand of the .proto (the engine has a RunCommand of its own). */
export type RunCommandMessage = Message<'RunCommand'>;
/** LogChunk of the .proto (the engine has a LogChunk of its own). */
export type LogChunkMessage = Message<'LogChunk'>;
export type ReportEvent = Message<'ReportEvent'>;
export type ReportRequest = Message<'ReportRequest'>;
export type ReportResponse = Message<'ReportResponse'>;
export type StartSubRunRequest = Message<'StartSubRunRequest'>;
export type StartSubRunResponse = Message<'StartSubRunResponse'>;
export type WaitRunRequest = Message<'WaitRunRequest'>;
export type WaitRunResponse = Message<'WaitRunResponse'>;
export type StopSubRunRequest = Message<'StopSubRunRequest'>;
export type StopSubRunResponse = Message<'StopSubRunResponse'>;
/** One call's request or answer on the Session stream. */
export type SessionFrame = Message<'SessionFrame'>;

/** The methods the .proto declares (grpc.ServiceDefinition, which the definition extends, adds an index signature). */
type DeclaredMethod = keyof { [K in keyof CoordinatorDefinition as string extends K ? never : number extends K ? never : K]: true };

/** The unary calls of the service (Session carries them multiplexed). */
export type CoordinatorMethod = Exclude<DeclaredMethod, 'Session'>;

/** Request and response of each unary call, as the generated service definition types them. */
export type CoordinatorMethods = {
  [M in CoordinatorMethod]: CoordinatorDefinition[M] extends MethodDefinition<infer _Req, infer _Res, infer RequestOut, infer ResponseOut>
    ? { request: Received<RequestOut>; response: Received<ResponseOut> }
    : never;
};
