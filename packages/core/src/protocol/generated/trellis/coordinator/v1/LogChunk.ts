// Original file: protos/coordinator/v1/coordinator.proto

import type { Long } from '@grpc/proto-loader';

export interface LogChunk {
  /**
   * The log file's path relative to the attempt's log directory ("run.log", "<step>.out", ...):
   * the coordinator writes it under its own log directory for the run.
   */
  'stream'?: (string);
  /**
   * Byte offset of `data` in that file. Chunks are written at their offset, so a resend after
   * a reconnect rewrites the same bytes and never duplicates log text.
   */
  'offset'?: (number | string | Long);
  'data'?: (Buffer | Uint8Array | string);
}

export interface LogChunk__Output {
  /**
   * The log file's path relative to the attempt's log directory ("run.log", "<step>.out", ...):
   * the coordinator writes it under its own log directory for the run.
   */
  'stream': (string);
  /**
   * Byte offset of `data` in that file. Chunks are written at their offset, so a resend after
   * a reconnect rewrites the same bytes and never duplicates log text.
   */
  'offset': (number);
  'data': (Buffer);
}
