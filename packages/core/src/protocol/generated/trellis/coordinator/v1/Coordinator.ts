// Original file: protos/coordinator/v1/coordinator.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AckTaskRequest as _trellis_coordinator_v1_AckTaskRequest, AckTaskRequest__Output as _trellis_coordinator_v1_AckTaskRequest__Output } from '../../../trellis/coordinator/v1/AckTaskRequest.js';
import type { AckTaskResponse as _trellis_coordinator_v1_AckTaskResponse, AckTaskResponse__Output as _trellis_coordinator_v1_AckTaskResponse__Output } from '../../../trellis/coordinator/v1/AckTaskResponse.js';
import type { HeartbeatRequest as _trellis_coordinator_v1_HeartbeatRequest, HeartbeatRequest__Output as _trellis_coordinator_v1_HeartbeatRequest__Output } from '../../../trellis/coordinator/v1/HeartbeatRequest.js';
import type { HeartbeatResponse as _trellis_coordinator_v1_HeartbeatResponse, HeartbeatResponse__Output as _trellis_coordinator_v1_HeartbeatResponse__Output } from '../../../trellis/coordinator/v1/HeartbeatResponse.js';
import type { PollRequest as _trellis_coordinator_v1_PollRequest, PollRequest__Output as _trellis_coordinator_v1_PollRequest__Output } from '../../../trellis/coordinator/v1/PollRequest.js';
import type { PollResponse as _trellis_coordinator_v1_PollResponse, PollResponse__Output as _trellis_coordinator_v1_PollResponse__Output } from '../../../trellis/coordinator/v1/PollResponse.js';
import type { RegisterRequest as _trellis_coordinator_v1_RegisterRequest, RegisterRequest__Output as _trellis_coordinator_v1_RegisterRequest__Output } from '../../../trellis/coordinator/v1/RegisterRequest.js';
import type { RegisterResponse as _trellis_coordinator_v1_RegisterResponse, RegisterResponse__Output as _trellis_coordinator_v1_RegisterResponse__Output } from '../../../trellis/coordinator/v1/RegisterResponse.js';
import type { ReportRequest as _trellis_coordinator_v1_ReportRequest, ReportRequest__Output as _trellis_coordinator_v1_ReportRequest__Output } from '../../../trellis/coordinator/v1/ReportRequest.js';
import type { ReportResponse as _trellis_coordinator_v1_ReportResponse, ReportResponse__Output as _trellis_coordinator_v1_ReportResponse__Output } from '../../../trellis/coordinator/v1/ReportResponse.js';
import type { SessionFrame as _trellis_coordinator_v1_SessionFrame, SessionFrame__Output as _trellis_coordinator_v1_SessionFrame__Output } from '../../../trellis/coordinator/v1/SessionFrame.js';
import type { StartSubRunRequest as _trellis_coordinator_v1_StartSubRunRequest, StartSubRunRequest__Output as _trellis_coordinator_v1_StartSubRunRequest__Output } from '../../../trellis/coordinator/v1/StartSubRunRequest.js';
import type { StartSubRunResponse as _trellis_coordinator_v1_StartSubRunResponse, StartSubRunResponse__Output as _trellis_coordinator_v1_StartSubRunResponse__Output } from '../../../trellis/coordinator/v1/StartSubRunResponse.js';
import type { StopSubRunRequest as _trellis_coordinator_v1_StopSubRunRequest, StopSubRunRequest__Output as _trellis_coordinator_v1_StopSubRunRequest__Output } from '../../../trellis/coordinator/v1/StopSubRunRequest.js';
import type { StopSubRunResponse as _trellis_coordinator_v1_StopSubRunResponse, StopSubRunResponse__Output as _trellis_coordinator_v1_StopSubRunResponse__Output } from '../../../trellis/coordinator/v1/StopSubRunResponse.js';
import type { WaitRunRequest as _trellis_coordinator_v1_WaitRunRequest, WaitRunRequest__Output as _trellis_coordinator_v1_WaitRunRequest__Output } from '../../../trellis/coordinator/v1/WaitRunRequest.js';
import type { WaitRunResponse as _trellis_coordinator_v1_WaitRunResponse, WaitRunResponse__Output as _trellis_coordinator_v1_WaitRunResponse__Output } from '../../../trellis/coordinator/v1/WaitRunResponse.js';

export interface CoordinatorClient extends grpc.Client {
  /**
   * Confirms a claim before the worker starts the run. `accepted: false` means the task was
   * taken back (ack timeout, stop, newer attempt): the worker must not run it.
   */
  AckTask(argument: _trellis_coordinator_v1_AckTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_AckTaskResponse__Output>): grpc.ClientUnaryCall;
  AckTask(argument: _trellis_coordinator_v1_AckTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_AckTaskResponse__Output>): grpc.ClientUnaryCall;
  AckTask(argument: _trellis_coordinator_v1_AckTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_AckTaskResponse__Output>): grpc.ClientUnaryCall;
  AckTask(argument: _trellis_coordinator_v1_AckTaskRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_AckTaskResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Confirms a claim before the worker starts the run. `accepted: false` means the task was
   * taken back (ack timeout, stop, newer attempt): the worker must not run it.
   */
  ackTask(argument: _trellis_coordinator_v1_AckTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_AckTaskResponse__Output>): grpc.ClientUnaryCall;
  ackTask(argument: _trellis_coordinator_v1_AckTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_AckTaskResponse__Output>): grpc.ClientUnaryCall;
  ackTask(argument: _trellis_coordinator_v1_AckTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_AckTaskResponse__Output>): grpc.ClientUnaryCall;
  ackTask(argument: _trellis_coordinator_v1_AckTaskRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_AckTaskResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Every second. Carries what runs here; answers with attempts the worker must cancel.
   */
  Heartbeat(argument: _trellis_coordinator_v1_HeartbeatRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  Heartbeat(argument: _trellis_coordinator_v1_HeartbeatRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  Heartbeat(argument: _trellis_coordinator_v1_HeartbeatRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  Heartbeat(argument: _trellis_coordinator_v1_HeartbeatRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Every second. Carries what runs here; answers with attempts the worker must cancel.
   */
  heartbeat(argument: _trellis_coordinator_v1_HeartbeatRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeat(argument: _trellis_coordinator_v1_HeartbeatRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeat(argument: _trellis_coordinator_v1_HeartbeatRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeat(argument: _trellis_coordinator_v1_HeartbeatRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Long-poll: waits up to wait_ms for a task matching the worker's labels; an empty
   * response means "poll again". Long-poll rather than a server stream so that every hand-out
   * is one request/response pair: a poller that died cannot be handed a task, and a response
   * lost in transit is covered by the ack timeout.
   */
  Poll(argument: _trellis_coordinator_v1_PollRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_PollResponse__Output>): grpc.ClientUnaryCall;
  Poll(argument: _trellis_coordinator_v1_PollRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_PollResponse__Output>): grpc.ClientUnaryCall;
  Poll(argument: _trellis_coordinator_v1_PollRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_PollResponse__Output>): grpc.ClientUnaryCall;
  Poll(argument: _trellis_coordinator_v1_PollRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_PollResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Long-poll: waits up to wait_ms for a task matching the worker's labels; an empty
   * response means "poll again". Long-poll rather than a server stream so that every hand-out
   * is one request/response pair: a poller that died cannot be handed a task, and a response
   * lost in transit is covered by the ack timeout.
   */
  poll(argument: _trellis_coordinator_v1_PollRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_PollResponse__Output>): grpc.ClientUnaryCall;
  poll(argument: _trellis_coordinator_v1_PollRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_PollResponse__Output>): grpc.ClientUnaryCall;
  poll(argument: _trellis_coordinator_v1_PollRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_PollResponse__Output>): grpc.ClientUnaryCall;
  poll(argument: _trellis_coordinator_v1_PollRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_PollResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Announces a worker (id, labels, concurrency). Re-registering with the same id after a
   * reconnect is normal: the worker lists the attempts it holds, and the coordinator ends the
   * ones it no longer has (a restarted process holds none) before it answers with the rest.
   */
  Register(argument: _trellis_coordinator_v1_RegisterRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_RegisterResponse__Output>): grpc.ClientUnaryCall;
  Register(argument: _trellis_coordinator_v1_RegisterRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_RegisterResponse__Output>): grpc.ClientUnaryCall;
  Register(argument: _trellis_coordinator_v1_RegisterRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_RegisterResponse__Output>): grpc.ClientUnaryCall;
  Register(argument: _trellis_coordinator_v1_RegisterRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_RegisterResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Announces a worker (id, labels, concurrency). Re-registering with the same id after a
   * reconnect is normal: the worker lists the attempts it holds, and the coordinator ends the
   * ones it no longer has (a restarted process holds none) before it answers with the rest.
   */
  register(argument: _trellis_coordinator_v1_RegisterRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_RegisterResponse__Output>): grpc.ClientUnaryCall;
  register(argument: _trellis_coordinator_v1_RegisterRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_RegisterResponse__Output>): grpc.ClientUnaryCall;
  register(argument: _trellis_coordinator_v1_RegisterRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_RegisterResponse__Output>): grpc.ClientUnaryCall;
  register(argument: _trellis_coordinator_v1_RegisterRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_RegisterResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Status snapshots, log chunks and outputs of one attempt, in order, idempotent by sequence.
   */
  Report(argument: _trellis_coordinator_v1_ReportRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_ReportResponse__Output>): grpc.ClientUnaryCall;
  Report(argument: _trellis_coordinator_v1_ReportRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_ReportResponse__Output>): grpc.ClientUnaryCall;
  Report(argument: _trellis_coordinator_v1_ReportRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_ReportResponse__Output>): grpc.ClientUnaryCall;
  Report(argument: _trellis_coordinator_v1_ReportRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_ReportResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Status snapshots, log chunks and outputs of one attempt, in order, idempotent by sequence.
   */
  report(argument: _trellis_coordinator_v1_ReportRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_ReportResponse__Output>): grpc.ClientUnaryCall;
  report(argument: _trellis_coordinator_v1_ReportRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_ReportResponse__Output>): grpc.ClientUnaryCall;
  report(argument: _trellis_coordinator_v1_ReportRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_ReportResponse__Output>): grpc.ClientUnaryCall;
  report(argument: _trellis_coordinator_v1_ReportRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_ReportResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The calls above, multiplexed on one long-lived stream per worker: each call is a request
   * frame and an answer frame, with the same messages, rules and status codes as the unary
   * call. A unary call opens an HTTP/2 stream with headers and trailers each time, about ten
   * times the CPU of two frames (measured with grpc-js); a worker makes three or more calls
   * per run. When the stream breaks, every call on it fails with UNAVAILABLE: each is retried
   * as a failed unary call would be, and the fencing above keeps that safe.
   */
  Session(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_trellis_coordinator_v1_SessionFrame, _trellis_coordinator_v1_SessionFrame__Output>;
  Session(options?: grpc.CallOptions): grpc.ClientDuplexStream<_trellis_coordinator_v1_SessionFrame, _trellis_coordinator_v1_SessionFrame__Output>;
  /**
   * The calls above, multiplexed on one long-lived stream per worker: each call is a request
   * frame and an answer frame, with the same messages, rules and status codes as the unary
   * call. A unary call opens an HTTP/2 stream with headers and trailers each time, about ten
   * times the CPU of two frames (measured with grpc-js); a worker makes three or more calls
   * per run. When the stream breaks, every call on it fails with UNAVAILABLE: each is retried
   * as a failed unary call would be, and the fencing above keeps that safe.
   */
  session(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_trellis_coordinator_v1_SessionFrame, _trellis_coordinator_v1_SessionFrame__Output>;
  session(options?: grpc.CallOptions): grpc.ClientDuplexStream<_trellis_coordinator_v1_SessionFrame, _trellis_coordinator_v1_SessionFrame__Output>;
  
  /**
   * A sub-DAG step with a worker_selector: the coordinator creates the child run and queues it.
   */
  StartSubRun(argument: _trellis_coordinator_v1_StartSubRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_StartSubRunResponse__Output>): grpc.ClientUnaryCall;
  StartSubRun(argument: _trellis_coordinator_v1_StartSubRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_StartSubRunResponse__Output>): grpc.ClientUnaryCall;
  StartSubRun(argument: _trellis_coordinator_v1_StartSubRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_StartSubRunResponse__Output>): grpc.ClientUnaryCall;
  StartSubRun(argument: _trellis_coordinator_v1_StartSubRunRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_StartSubRunResponse__Output>): grpc.ClientUnaryCall;
  /**
   * A sub-DAG step with a worker_selector: the coordinator creates the child run and queues it.
   */
  startSubRun(argument: _trellis_coordinator_v1_StartSubRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_StartSubRunResponse__Output>): grpc.ClientUnaryCall;
  startSubRun(argument: _trellis_coordinator_v1_StartSubRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_StartSubRunResponse__Output>): grpc.ClientUnaryCall;
  startSubRun(argument: _trellis_coordinator_v1_StartSubRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_StartSubRunResponse__Output>): grpc.ClientUnaryCall;
  startSubRun(argument: _trellis_coordinator_v1_StartSubRunRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_StartSubRunResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The parent was stopped: stop a child run it started (wherever the child runs).
   */
  StopSubRun(argument: _trellis_coordinator_v1_StopSubRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_StopSubRunResponse__Output>): grpc.ClientUnaryCall;
  StopSubRun(argument: _trellis_coordinator_v1_StopSubRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_StopSubRunResponse__Output>): grpc.ClientUnaryCall;
  StopSubRun(argument: _trellis_coordinator_v1_StopSubRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_StopSubRunResponse__Output>): grpc.ClientUnaryCall;
  StopSubRun(argument: _trellis_coordinator_v1_StopSubRunRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_StopSubRunResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The parent was stopped: stop a child run it started (wherever the child runs).
   */
  stopSubRun(argument: _trellis_coordinator_v1_StopSubRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_StopSubRunResponse__Output>): grpc.ClientUnaryCall;
  stopSubRun(argument: _trellis_coordinator_v1_StopSubRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_StopSubRunResponse__Output>): grpc.ClientUnaryCall;
  stopSubRun(argument: _trellis_coordinator_v1_StopSubRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_StopSubRunResponse__Output>): grpc.ClientUnaryCall;
  stopSubRun(argument: _trellis_coordinator_v1_StopSubRunRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_StopSubRunResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Long-poll for a child run's end (status and outputs).
   */
  WaitRun(argument: _trellis_coordinator_v1_WaitRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_WaitRunResponse__Output>): grpc.ClientUnaryCall;
  WaitRun(argument: _trellis_coordinator_v1_WaitRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_WaitRunResponse__Output>): grpc.ClientUnaryCall;
  WaitRun(argument: _trellis_coordinator_v1_WaitRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_WaitRunResponse__Output>): grpc.ClientUnaryCall;
  WaitRun(argument: _trellis_coordinator_v1_WaitRunRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_WaitRunResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Long-poll for a child run's end (status and outputs).
   */
  waitRun(argument: _trellis_coordinator_v1_WaitRunRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_WaitRunResponse__Output>): grpc.ClientUnaryCall;
  waitRun(argument: _trellis_coordinator_v1_WaitRunRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_trellis_coordinator_v1_WaitRunResponse__Output>): grpc.ClientUnaryCall;
  waitRun(argument: _trellis_coordinator_v1_WaitRunRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_trellis_coordinator_v1_WaitRunResponse__Output>): grpc.ClientUnaryCall;
  waitRun(argument: _trellis_coordinator_v1_WaitRunRequest, callback: grpc.requestCallback<_trellis_coordinator_v1_WaitRunResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface CoordinatorHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Confirms a claim before the worker starts the run. `accepted: false` means the task was
   * taken back (ack timeout, stop, newer attempt): the worker must not run it.
   */
  AckTask: grpc.handleUnaryCall<_trellis_coordinator_v1_AckTaskRequest__Output, _trellis_coordinator_v1_AckTaskResponse>;
  
  /**
   * Every second. Carries what runs here; answers with attempts the worker must cancel.
   */
  Heartbeat: grpc.handleUnaryCall<_trellis_coordinator_v1_HeartbeatRequest__Output, _trellis_coordinator_v1_HeartbeatResponse>;
  
  /**
   * Long-poll: waits up to wait_ms for a task matching the worker's labels; an empty
   * response means "poll again". Long-poll rather than a server stream so that every hand-out
   * is one request/response pair: a poller that died cannot be handed a task, and a response
   * lost in transit is covered by the ack timeout.
   */
  Poll: grpc.handleUnaryCall<_trellis_coordinator_v1_PollRequest__Output, _trellis_coordinator_v1_PollResponse>;
  
  /**
   * Announces a worker (id, labels, concurrency). Re-registering with the same id after a
   * reconnect is normal: the worker lists the attempts it holds, and the coordinator ends the
   * ones it no longer has (a restarted process holds none) before it answers with the rest.
   */
  Register: grpc.handleUnaryCall<_trellis_coordinator_v1_RegisterRequest__Output, _trellis_coordinator_v1_RegisterResponse>;
  
  /**
   * Status snapshots, log chunks and outputs of one attempt, in order, idempotent by sequence.
   */
  Report: grpc.handleUnaryCall<_trellis_coordinator_v1_ReportRequest__Output, _trellis_coordinator_v1_ReportResponse>;
  
  /**
   * The calls above, multiplexed on one long-lived stream per worker: each call is a request
   * frame and an answer frame, with the same messages, rules and status codes as the unary
   * call. A unary call opens an HTTP/2 stream with headers and trailers each time, about ten
   * times the CPU of two frames (measured with grpc-js); a worker makes three or more calls
   * per run. When the stream breaks, every call on it fails with UNAVAILABLE: each is retried
   * as a failed unary call would be, and the fencing above keeps that safe.
   */
  Session: grpc.handleBidiStreamingCall<_trellis_coordinator_v1_SessionFrame__Output, _trellis_coordinator_v1_SessionFrame>;
  
  /**
   * A sub-DAG step with a worker_selector: the coordinator creates the child run and queues it.
   */
  StartSubRun: grpc.handleUnaryCall<_trellis_coordinator_v1_StartSubRunRequest__Output, _trellis_coordinator_v1_StartSubRunResponse>;
  
  /**
   * The parent was stopped: stop a child run it started (wherever the child runs).
   */
  StopSubRun: grpc.handleUnaryCall<_trellis_coordinator_v1_StopSubRunRequest__Output, _trellis_coordinator_v1_StopSubRunResponse>;
  
  /**
   * Long-poll for a child run's end (status and outputs).
   */
  WaitRun: grpc.handleUnaryCall<_trellis_coordinator_v1_WaitRunRequest__Output, _trellis_coordinator_v1_WaitRunResponse>;
  
}

export interface CoordinatorDefinition extends grpc.ServiceDefinition {
  AckTask: MethodDefinition<_trellis_coordinator_v1_AckTaskRequest, _trellis_coordinator_v1_AckTaskResponse, _trellis_coordinator_v1_AckTaskRequest__Output, _trellis_coordinator_v1_AckTaskResponse__Output>
  Heartbeat: MethodDefinition<_trellis_coordinator_v1_HeartbeatRequest, _trellis_coordinator_v1_HeartbeatResponse, _trellis_coordinator_v1_HeartbeatRequest__Output, _trellis_coordinator_v1_HeartbeatResponse__Output>
  Poll: MethodDefinition<_trellis_coordinator_v1_PollRequest, _trellis_coordinator_v1_PollResponse, _trellis_coordinator_v1_PollRequest__Output, _trellis_coordinator_v1_PollResponse__Output>
  Register: MethodDefinition<_trellis_coordinator_v1_RegisterRequest, _trellis_coordinator_v1_RegisterResponse, _trellis_coordinator_v1_RegisterRequest__Output, _trellis_coordinator_v1_RegisterResponse__Output>
  Report: MethodDefinition<_trellis_coordinator_v1_ReportRequest, _trellis_coordinator_v1_ReportResponse, _trellis_coordinator_v1_ReportRequest__Output, _trellis_coordinator_v1_ReportResponse__Output>
  Session: MethodDefinition<_trellis_coordinator_v1_SessionFrame, _trellis_coordinator_v1_SessionFrame, _trellis_coordinator_v1_SessionFrame__Output, _trellis_coordinator_v1_SessionFrame__Output>
  StartSubRun: MethodDefinition<_trellis_coordinator_v1_StartSubRunRequest, _trellis_coordinator_v1_StartSubRunResponse, _trellis_coordinator_v1_StartSubRunRequest__Output, _trellis_coordinator_v1_StartSubRunResponse__Output>
  StopSubRun: MethodDefinition<_trellis_coordinator_v1_StopSubRunRequest, _trellis_coordinator_v1_StopSubRunResponse, _trellis_coordinator_v1_StopSubRunRequest__Output, _trellis_coordinator_v1_StopSubRunResponse__Output>
  WaitRun: MethodDefinition<_trellis_coordinator_v1_WaitRunRequest, _trellis_coordinator_v1_WaitRunResponse, _trellis_coordinator_v1_WaitRunRequest__Output, _trellis_coordinator_v1_WaitRunResponse__Output>
}
