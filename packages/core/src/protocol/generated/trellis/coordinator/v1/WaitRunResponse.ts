// Original file: protos/coordinator/v1/coordinator.proto


export interface WaitRunResponse {
  'finished'?: (boolean);
  'status'?: (number);
  /**
   * JSON map of the child's outputs.
   */
  'outputsJson'?: (string);
  'error'?: (string);
}

export interface WaitRunResponse__Output {
  'finished': (boolean);
  'status': (number);
  /**
   * JSON map of the child's outputs.
   */
  'outputsJson': (string);
  'error': (string);
}
