import { setFlagsFromString } from 'node:v8';

/**
 * Keeps V8's young generation at its initial size (two 1 MB semi-spaces) in a long-running
 * daemon. Left to grow, start-up alone (loading modules, parsing the gRPC protocol, migrations)
 * grows it to two 16 MB semi-spaces, which stay committed for the life of the process: 15 MB of
 * an idle coordinator's resident memory and 4 MB of an idle worker's. The price is a scavenge per
 * MB allocated instead of per 16 MB; short-lived objects still die young, so a busy daemon pays
 * a little CPU, not memory. Set at run time because `trellis server` and `trellis worker` are
 * started as plain `node` processes: V8 reads this flag each time the young generation would grow.
 */
export function keepYoungGenerationSmall(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}
