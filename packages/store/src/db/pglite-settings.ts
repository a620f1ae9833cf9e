import { setFlagsFromString } from 'node:v8';
import { PGlite } from '@electric-sql/pglite';

/**
 * PostgreSQL's default 128 MB of shared buffers live in PGlite's WebAssembly memory, and the pages
 * it touches stay resident for the life of the process (an idle coordinator reopening its data
 * directory held 339 MB with them, 217 MB with 16 MB). An embedded coordinator's working set is
 * small, and a page that is not buffered is one read from the operating system's cache.
 */
export const PGLITE_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

/**
 * Compiles WebAssembly with V8's baseline compiler only, before PGlite's 9 MB module is compiled.
 * Left to tier up, V8 also keeps optimised code for PGlite's hot functions and the memory that
 * compiled it: a bare PGlite reopening its directory held 156 MB, 123 MB with baseline code only,
 * and a migrated one under the store 199-207 MB against 146 MB. Small queries, an embedded
 * coordinator's work, cost no more CPU (8,000 insert+select pairs: 6.7-7.6 s with tier-up, 6.1-6.2 s
 * without, tier-up's compiling included); scans and sorts of 100,000 rows cost about 30% more.
 * Process-wide, and read when a module is compiled, so it is set here, before PGlite loads one.
 */
export function compileWasmWithBaselineOnly(): void {
  setFlagsFromString('--liftoff-only');
}
