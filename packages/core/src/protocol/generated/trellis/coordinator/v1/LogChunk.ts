// Original file: protos/coordinator/v1/coordinator.proto

import type { Long } from '@grpc/proto-loader';

export interface LogChunk {
  /**
   * The log file's path relative to the attempt's log directory ("run.log", "<step>.out", ...):
   * the name the coordinator stores its bytes under in the database.
   */
  'stream'?: (string);
  /**
   * Byte offset of `data` in that file. Chunks are stored at their offset, so a resend after
   * a reconnect (to this coordinator or another) never duplicates log text.
   */
  'offset'?: (number | string | Long);
  'data'?: (Buffer | Uint8Array | string);
}

export interface LogChunk__Output {
  /**
   * The log file's path relative to the attempt's log directory ("run.log", "<step>.out", ...):
   * the name the coordinator stores its bytes under in the database.
   */
  'stream': (string);
  /**
   * Byte offset of `data` in that file. Chunks are stored at their offset, so a resend after
   * a reconnect (to this coordinator or another) never duplicates log text.
   */
  'offset': (number);
  'data': (Buffer);
}
