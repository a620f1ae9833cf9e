// Original file: protos/coordinator/v1/coordinator.proto


export interface SessionFrame {
  /**
   * Chosen by the worker for a request; the answer carries the same id.
   */
  'id'?: (number);
  /**
   * Request: the RPC name (Poll, AckTask, ...). Empty in answers.
   */
  'method'?: (string);
  /**
   * The request or response message, encoded as that RPC's own message type.
   */
  'payload'?: (Buffer | Uint8Array | string);
  /**
   * Answer: the gRPC status code (0 OK) and, when not OK, its message.
   */
  'code'?: (number);
  'message'?: (string);
  /**
   * Request: the worker gave up on call `id` (as a cancelled unary call).
   */
  'cancel'?: (boolean);
}

export interface SessionFrame__Output {
  /**
   * Chosen by the worker for a request; the answer carries the same id.
   */
  'id': (number);
  /**
   * Request: the RPC name (Poll, AckTask, ...). Empty in answers.
   */
  'method': (string);
  /**
   * The request or response message, encoded as that RPC's own message type.
   */
  'payload': (Buffer);
  /**
   * Answer: the gRPC status code (0 OK) and, when not OK, its message.
   */
  'code': (number);
  'message': (string);
  /**
   * Request: the worker gave up on call `id` (as a cancelled unary call).
   */
  'cancel': (boolean);
}
