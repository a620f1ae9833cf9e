// Original file: protos/coordinator/v1/coordinator.proto


export interface StopSubRunResponse {
  /**
   * False when the child had already ended.
   */
  'stopped'?: (boolean);
}

export interface StopSubRunResponse__Output {
  /**
   * False when the child had already ended.
   */
  'stopped': (boolean);
}
