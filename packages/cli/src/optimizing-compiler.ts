import { setFlagsFromString } from 'node:v8';

/**
 * Leaves V8's optimizing compiler (TurboFan) out of an idle worker daemon. The first functions
 * TurboFan optimizes, within seconds of start (module loading, heartbeats, polls), page in the
 * compiler's code and zones: about 4.5 MB of an idle worker's resident memory, for code that
 * runs a few times a second. Set at run time because `trellis worker` is started as a plain
 * `node` process, and before the program loads, so that nothing is optimized during start-up.
 */
export function leaveOutOptimizingCompiler(): void {
  setFlagsFromString('--no-turbofan');
}

/**
 * Lets V8 optimize again, once the worker runs steps: the engine, the report path and gRPC
 * framing are then hot, and without TurboFan the worker spent 2.1-2.3 ms of CPU per one-step run
 * against 1.6-2.0 ms with it (8 pollers, 300-run rounds, two alternating pairs of runs), about
 * 7% of the machine's throughput through one worker on two cores. V8 reads the flag when it
 * decides to optimize a function, so functions compiled before are optimized too.
 */
export function bringBackOptimizingCompiler(): void {
  setFlagsFromString('--turbofan');
}
