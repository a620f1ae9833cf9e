import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { AckTaskRequest as _trellis_coordinator_v1_AckTaskRequest, AckTaskRequest__Output as _trellis_coordinator_v1_AckTaskRequest__Output } from './trellis/coordinator/v1/AckTaskRequest.js';
import type { AckTaskResponse as _trellis_coordinator_v1_AckTaskResponse, AckTaskResponse__Output as _trellis_coordinator_v1_AckTaskResponse__Output } from './trellis/coordinator/v1/AckTaskResponse.js';
import type { CoordinatorClient as _trellis_coordinator_v1_CoordinatorClient, CoordinatorDefinition as _trellis_coordinator_v1_CoordinatorDefinition } from './trellis/coordinator/v1/Coordinator.js';
import type { HeartbeatRequest as _trellis_coordinator_v1_HeartbeatRequest, HeartbeatRequest__Output as _trellis_coordinator_v1_HeartbeatRequest__Output } from './trellis/coordinator/v1/HeartbeatRequest.js';
import type { HeartbeatResponse as _trellis_coordinator_v1_HeartbeatResponse, HeartbeatResponse__Output as _trellis_coordinator_v1_HeartbeatResponse__Output } from './trellis/coordinator/v1/HeartbeatResponse.js';
import type { LogChunk as _trellis_coordinator_v1_LogChunk, LogChunk__Output as _trellis_coordinator_v1_LogChunk__Output } from './trellis/coordinator/v1/LogChunk.js';
import type { PollRequest as _trellis_coordinator_v1_PollRequest, PollRequest__Output as _trellis_coordinator_v1_PollRequest__Output } from './trellis/coordinator/v1/PollRequest.js';
import type { PollResponse as _trellis_coordinator_v1_PollResponse, PollResponse__Output as _trellis_coordinator_v1_PollResponse__Output } from './trellis/coordinator/v1/PollResponse.js';
import type { RegisterRequest as _trellis_coordinator_v1_RegisterRequest, RegisterRequest__Output as _trellis_coordinator_v1_RegisterRequest__Output } from './trellis/coordinator/v1/RegisterRequest.js';
import type { RegisterResponse as _trellis_coordinator_v1_RegisterResponse, RegisterResponse__Output as _trellis_coordinator_v1_RegisterResponse__Output } from './trellis/coordinator/v1/RegisterResponse.js';
import type { ReportEvent as _trellis_coordinator_v1_ReportEvent, ReportEvent__Output as _trellis_coordinator_v1_ReportEvent__Output } from './trellis/coordinator/v1/ReportEvent.js';
import type { ReportRequest as _trellis_coordinator_v1_ReportRequest, ReportRequest__Output as _trellis_coordinator_v1_ReportRequest__Output } from './trellis/coordinator/v1/ReportRequest.js';
import type { ReportResponse as _trellis_coordinator_v1_ReportResponse, ReportResponse__Output as _trellis_coordinator_v1_ReportResponse__Output } from './trellis/coordinator/v1/ReportResponse.js';
import type { RunCommand as _trellis_coordinator_v1_RunCommand, RunCommand__Output as _trellis_coordinator_v1_RunCommand__Output } from './trellis/coordinator/v1/RunCommand.js';
import type { RunningTask as _trellis_coordinator_v1_RunningTask, RunningTask__Output as _trellis_coordinator_v1_RunningTask__Output } from './trellis/coordinator/v1/RunningTask.js';
import type { SessionFrame as _trellis_coordinator_v1_SessionFrame, SessionFrame__Output as _trellis_coordinator_v1_SessionFrame__Output } from './trellis/coordinator/v1/SessionFrame.js';
import type { StartSubRunRequest as _trellis_coordinator_v1_StartSubRunRequest, StartSubRunRequest__Output as _trellis_coordinator_v1_StartSubRunRequest__Output } from './trellis/coordinator/v1/StartSubRunRequest.js';
import type { StartSubRunResponse as _trellis_coordinator_v1_StartSubRunResponse, StartSubRunResponse__Output as _trellis_coordinator_v1_StartSubRunResponse__Output } from './trellis/coordinator/v1/StartSubRunResponse.js';
import type { StopSubRunRequest as _trellis_coordinator_v1_StopSubRunRequest, StopSubRunRequest__Output as _trellis_coordinator_v1_StopSubRunRequest__Output } from './trellis/coordinator/v1/StopSubRunRequest.js';
import type { StopSubRunResponse as _trellis_coordinator_v1_StopSubRunResponse, StopSubRunResponse__Output as _trellis_coordinator_v1_StopSubRunResponse__Output } from './trellis/coordinator/v1/StopSubRunResponse.js';
import type { Task as _trellis_coordinator_v1_Task, Task__Output as _trellis_coordinator_v1_Task__Output } from './trellis/coordinator/v1/Task.js';
import type { TaskRef as _trellis_coordinator_v1_TaskRef, TaskRef__Output as _trellis_coordinator_v1_TaskRef__Output } from './trellis/coordinator/v1/TaskRef.js';
import type { WaitRunRequest as _trellis_coordinator_v1_WaitRunRequest, WaitRunRequest__Output as _trellis_coordinator_v1_WaitRunRequest__Output } from './trellis/coordinator/v1/WaitRunRequest.js';
import type { WaitRunResponse as _trellis_coordinator_v1_WaitRunResponse, WaitRunResponse__Output as _trellis_coordinator_v1_WaitRunResponse__Output } from './trellis/coordinator/v1/WaitRunResponse.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  trellis: {
    coordinator: {
      v1: {
        AckTaskRequest: MessageTypeDefinition<_trellis_coordinator_v1_AckTaskRequest, _trellis_coordinator_v1_AckTaskRequest__Output>
        AckTaskResponse: MessageTypeDefinition<_trellis_coordinator_v1_AckTaskResponse, _trellis_coordinator_v1_AckTaskResponse__Output>
        Coordinator: SubtypeConstructor<typeof grpc.Client, _trellis_coordinator_v1_CoordinatorClient> & { service: _trellis_coordinator_v1_CoordinatorDefinition }
        HeartbeatRequest: MessageTypeDefinition<_trellis_coordinator_v1_HeartbeatRequest, _trellis_coordinator_v1_HeartbeatRequest__Output>
        HeartbeatResponse: MessageTypeDefinition<_trellis_coordinator_v1_HeartbeatResponse, _trellis_coordinator_v1_HeartbeatResponse__Output>
        LogChunk: MessageTypeDefinition<_trellis_coordinator_v1_LogChunk, _trellis_coordinator_v1_LogChunk__Output>
        PollRequest: MessageTypeDefinition<_trellis_coordinator_v1_PollRequest, _trellis_coordinator_v1_PollRequest__Output>
        PollResponse: MessageTypeDefinition<_trellis_coordinator_v1_PollResponse, _trellis_coordinator_v1_PollResponse__Output>
        RegisterRequest: MessageTypeDefinition<_trellis_coordinator_v1_RegisterRequest, _trellis_coordinator_v1_RegisterRequest__Output>
        RegisterResponse: MessageTypeDefinition<_trellis_coordinator_v1_RegisterResponse, _trellis_coordinator_v1_RegisterResponse__Output>
        ReportEvent: MessageTypeDefinition<_trellis_coordinator_v1_ReportEvent, _trellis_coordinator_v1_ReportEvent__Output>
        ReportRequest: MessageTypeDefinition<_trellis_coordinator_v1_ReportRequest, _trellis_coordinator_v1_ReportRequest__Output>
        ReportResponse: MessageTypeDefinition<_trellis_coordinator_v1_ReportResponse, _trellis_coordinator_v1_ReportResponse__Output>
        RunCommand: MessageTypeDefinition<_trellis_coordinator_v1_RunCommand, _trellis_coordinator_v1_RunCommand__Output>
        RunningTask: MessageTypeDefinition<_trellis_coordinator_v1_RunningTask, _trellis_coordinator_v1_RunningTask__Output>
        SessionFrame: MessageTypeDefinition<_trellis_coordinator_v1_SessionFrame, _trellis_coordinator_v1_SessionFrame__Output>
        StartSubRunRequest: MessageTypeDefinition<_trellis_coordinator_v1_StartSubRunRequest, _trellis_coordinator_v1_StartSubRunRequest__Output>
        StartSubRunResponse: MessageTypeDefinition<_trellis_coordinator_v1_StartSubRunResponse, _trellis_coordinator_v1_StartSubRunResponse__Output>
        StopSubRunRequest: MessageTypeDefinition<_trellis_coordinator_v1_StopSubRunRequest, _trellis_coordinator_v1_StopSubRunRequest__Output>
        StopSubRunResponse: MessageTypeDefinition<_trellis_coordinator_v1_StopSubRunResponse, _trellis_coordinator_v1_StopSubRunResponse__Output>
        Task: MessageTypeDefinition<_trellis_coordinator_v1_Task, _trellis_coordinator_v1_Task__Output>
        TaskRef: MessageTypeDefinition<_trellis_coordinator_v1_TaskRef, _trellis_coordinator_v1_TaskRef__Output>
        WaitRunRequest: MessageTypeDefinition<_trellis_coordinator_v1_WaitRunRequest, _trellis_coordinator_v1_WaitRunRequest__Output>
        WaitRunResponse: MessageTypeDefinition<_trellis_coordinator_v1_WaitRunResponse, _trellis_coordinator_v1_WaitRunResponse__Output>
      }
    }
  }
}

