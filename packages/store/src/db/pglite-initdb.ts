// Child process: creates an empty PGlite cluster in the directory given as its one argument, then
// exits. See initPgliteDir for why this runs in a process of its own.
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_START_PARAMS } from './pglite-start-params.js';

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: pglite-initdb <pgdata directory>');
const db = await PGlite.create({ dataDir: dir, startParams: PGLITE_START_PARAMS });
await db.close();
