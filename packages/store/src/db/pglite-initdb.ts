// Child process: creates an empty PGlite cluster in the directory given as its one argument, then
// exits. See createCluster in pglite-backend.ts for why this runs in a process of its own.
import { PGlite } from '@electric-sql/pglite';
import { compileWasmWithBaselineOnly, PGLITE_START_PARAMS } from './pglite-settings.js';

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: pglite-initdb <pgdata directory>');
compileWasmWithBaselineOnly();
const db = await PGlite.create({ dataDir: dir, startParams: PGLITE_START_PARAMS });
await db.close();
