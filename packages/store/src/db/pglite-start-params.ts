import { PGlite } from '@electric-sql/pglite';

/**
 * PostgreSQL's default 128 MB of shared buffers live in PGlite's WebAssembly memory, and the pages
 * it touches stay resident for the life of the process (an idle coordinator reopening its data
 * directory held 339 MB with them, 217 MB with 16 MB). An embedded coordinator's working set is
 * small, and a page that is not buffered is one read from the operating system's cache.
 */
export const PGLITE_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];
