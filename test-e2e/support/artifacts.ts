import { join, resolve } from 'node:path';

/** Where a failing e2e test leaves what explains it: a page's screenshot, a process's whole log (git ignores it; CI keeps it). */
export const ARTIFACTS = join(resolve(import.meta.dirname, '..'), '.artifacts');
