import { prefetchable } from '../lib/prefetch';
import { api, unwrap } from './client';

/**
 * The requests a page opened by a visit needs first, prefetchable so they go out while the
 * page's chunk loads (the routes table says which page needs which).
 */

/** The API's largest page: a thousand DAGs arrive in one answer. */
export const DAG_PAGE_SIZE = 1000;
/** More DAGs than any screen shows: the DAG list's first answer. */
export const DAG_FIRST_SCREEN = 100;
/** The newest runs of all DAGs, for the DAG list's dots. */
export const RECENT_RUNS = 500;

export const loadDagPage = prefetchable('dags', (page: number, perPage: number) => unwrap(api.GET('/dags', { params: { query: { page, perPage } } })));
export const loadRecentRuns = prefetchable('recent-runs', () => unwrap(api.GET('/dag-runs', { params: { query: { limit: RECENT_RUNS } } })));
export const loadRun = prefetchable('run', (name: string, dagRunId: string) => unwrap(api.GET('/dag-runs/{name}/{dagRunId}', { params: { path: { name, dagRunId } } })));
export const loadDag = prefetchable('dag', (fileName: string) => unwrap(api.GET('/dags/{fileName}', { params: { path: { fileName } } })));
export const loadMe = prefetchable('me', () => unwrap(api.GET('/auth/me')));
