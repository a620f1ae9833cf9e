import { setFlagsFromString } from 'node:v8';

/**
 * Leaves V8's optimizing compiler (TurboFan) out of the worker daemon. Its hot paths are
 * gRPC framing and protobuf coding, mostly native code, so interpreted and baseline JavaScript
 * costs it no measurable CPU per run, while the first functions TurboFan optimizes, within
 * seconds of start, page in the compiler's code and zones: about 4.5 MB of an idle worker's
 * resident memory. Set at run time because `trellis worker` is started as a plain `node`
 * process, and before the program loads: functions compiled while the flag was on (the CLI's,
 * Node's own timers and streams) would still be optimized once hot.
 */
export function leaveOutOptimizingCompiler(): void {
  setFlagsFromString('--no-turbofan');
}
