// Original file: protos/coordinator/v1/coordinator.proto


export interface WaitRunRequest {
  'dagName'?: (string);
  'dagRunId'?: (string);
  'waitMs'?: (number);
}

export interface WaitRunRequest__Output {
  'dagName': (string);
  'dagRunId': (string);
  'waitMs': (number);
}
