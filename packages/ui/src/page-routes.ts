import { DAG_FIRST_SCREEN, loadDag, loadDagPage, loadMe, loadRecentRuns, loadRun } from './api/loaders';

/**
 * The pages and their paths, without React: the entry module reads this table to start a
 * visit's first requests and its page's chunk before the shell (React and the router, the
 * larger part of the first load) has been downloaded and evaluated. App.tsx renders the same
 * table through the router.
 */

/** One chunk per page: the first load carries only the shell and the page it opens. */
export const PAGE_CHUNKS = {
  DagList: () => import('./pages/DagList'),
  DagDetail: () => import('./pages/DagDetail'),
  RunDetail: () => import('./pages/RunDetail'),
  Runs: () => import('./pages/Runs'),
  Queues: () => import('./pages/Queues'),
  Login: () => import('./pages/Login'),
  Users: () => import('./pages/Users'),
  ApiKeys: () => import('./pages/ApiKeys'),
  Webhooks: () => import('./pages/Webhooks'),
  Workspaces: () => import('./pages/Workspaces'),
  Profiles: () => import('./pages/Profiles'),
  ProfileDetail: () => import('./pages/ProfileDetail'),
  Documents: () => import('./pages/Documents'),
  Search: () => import('./pages/Search'),
  Sync: () => import('./pages/Sync'),
};

export type PageName = keyof typeof PAGE_CHUNKS;
export type Params = Partial<Record<string, string>>;

interface PageRoute {
  path: string;
  page: PageName;
  /** Starts the requests the page makes first, so they travel while its chunk loads. */
  prefetch?: (params: Params) => void;
}

export const PAGE_ROUTES = [
  {
    path: '/',
    page: 'DagList',
    prefetch: () => {
      loadDagPage.prefetch(1, DAG_FIRST_SCREEN);
      loadRecentRuns.prefetch();
    },
  },
  { path: '/dags/:fileName', page: 'DagDetail', prefetch: (p) => loadDag.prefetch(p.fileName ?? '') },
  { path: '/runs', page: 'Runs' },
  { path: '/runs/:name/:dagRunId', page: 'RunDetail', prefetch: (p) => loadRun.prefetch(p.name ?? '', p.dagRunId ?? '') },
  { path: '/queues', page: 'Queues' },
  { path: '/login', page: 'Login' },
  { path: '/setup', page: 'Login' },
  { path: '/admin/users', page: 'Users' },
  { path: '/admin/api-keys', page: 'ApiKeys' },
  { path: '/admin/webhooks', page: 'Webhooks' },
  { path: '/workspaces', page: 'Workspaces' },
  { path: '/docs', page: 'Documents' },
  { path: '/search', page: 'Search' },
  { path: '/sync', page: 'Sync' },
  { path: '/profiles', page: 'Profiles' },
  // `_global` is one of these too: a profile's name cannot begin with `_`.
  { path: '/profiles/:profileName', page: 'ProfileDetail' },
  { path: '/profiles/_workspaces/:workspace', page: 'ProfileDetail' },
] as const satisfies readonly PageRoute[];

export type PagePath = (typeof PAGE_ROUTES)[number]['path'];

/**
 * The params of `pattern` (static and `:name` segments, the only kinds the table uses) in
 * `pathname`, or undefined when it does not match. Matches as the router does: whole segments,
 * case-insensitive static parts, a trailing slash allowed, params decoded.
 */
function matchSegments(pattern: string, pathname: string): Params | undefined {
  const want = pattern.split('/').filter((s) => s !== '');
  const have = pathname.split('/').filter((s) => s !== '');
  if (want.length !== have.length) return undefined;
  const params: Params = {};
  for (const [i, segment] of want.entries()) {
    const value = have[i] ?? '';
    if (segment.startsWith(':')) {
      try {
        params[segment.slice(1)] = decodeURIComponent(value);
      } catch {
        return undefined;
      }
    } else if (segment.toLowerCase() !== value.toLowerCase()) return undefined;
  }
  return params;
}

/**
 * The page a visit opens: its first requests and the session check are started (they reach
 * fetch() a few microtasks later), and its name returned (undefined: no page at that path).
 */
export function startFirstRequests(pathname: string): PageName | undefined {
  loadMe.prefetch();
  for (const route of PAGE_ROUTES as readonly PageRoute[]) {
    const params = matchSegments(route.path, pathname);
    if (params === undefined) continue;
    route.prefetch?.(params);
    return route.page;
  }
  return undefined;
}
