// Original file: protos/coordinator/v1/coordinator.proto


export interface PollRequest {
  'workerId'?: (string);
  'pollerIndex'?: (number);
  'waitMs'?: (number);
}

export interface PollRequest__Output {
  'workerId': (string);
  'pollerIndex': (number);
  'waitMs': (number);
}
