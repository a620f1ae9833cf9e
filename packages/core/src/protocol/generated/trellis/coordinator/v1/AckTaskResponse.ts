// Original file: protos/coordinator/v1/coordinator.proto


export interface AckTaskResponse {
  'accepted'?: (boolean);
  'reason'?: (string);
}

export interface AckTaskResponse__Output {
  'accepted': (boolean);
  'reason': (string);
}
