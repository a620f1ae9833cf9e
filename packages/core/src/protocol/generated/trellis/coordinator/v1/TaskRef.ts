// Original file: protos/coordinator/v1/coordinator.proto


export interface TaskRef {
  'dagName'?: (string);
  'dagRunId'?: (string);
  'attemptId'?: (string);
}

export interface TaskRef__Output {
  'dagName': (string);
  'dagRunId': (string);
  'attemptId': (string);
}
