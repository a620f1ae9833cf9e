// Original file: protos/coordinator/v1/coordinator.proto


export interface StartSubRunResponse {
  'dagRunId'?: (string);
}

export interface StartSubRunResponse__Output {
  'dagRunId': (string);
}
