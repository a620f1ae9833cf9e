import type { SpawnedResult } from '../process-group.js';

/** Messages between a ProcessSpawner and its spawner process, over the fork IPC channel. */
export interface SpawnMessage {
  t: 'spawn';
  id: number;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  /** Opened for appending by the spawner; the same path twice means merged output. */
  stdoutPath: string;
  stderrPath: string;
  stopSignal: NodeJS.Signals;
  killAfterMs: number;
}

export interface StopMessage {
  t: 'stop';
  id: number;
}

export type ToSpawner = SpawnMessage | StopMessage;

export interface StartedMessage {
  t: 'started';
  id: number;
  pid: number;
}

export interface EndedMessage {
  t: 'ended';
  id: number;
  result: SpawnedResult;
}

export type FromSpawner = StartedMessage | EndedMessage;
