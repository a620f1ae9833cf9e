import { Component, Suspense, useEffect, useState, type ReactNode } from 'react';
import { BrowserRouter, matchPath, Navigate, NavLink, Route, Routes, useLocation } from 'react-router';
import { basePath } from './api/client';
import { AuthProvider, useAuth } from './lib/auth';
import { Loading } from './components/common';
import { pageChunk } from './lib/pages';
import { DAG_FIRST_SCREEN, loadDag, loadDagPage, loadMe, loadRecentRuns, loadRun } from './api/loaders';

// One chunk per page: the first load carries only the shell and the page it opens.
const DagList = pageChunk(() => import('./pages/DagList'));
const DagDetail = pageChunk(() => import('./pages/DagDetail'));
const RunDetail = pageChunk(() => import('./pages/RunDetail'));
const Runs = pageChunk(() => import('./pages/Runs'));
const Queues = pageChunk(() => import('./pages/Queues'));
const Login = pageChunk(() => import('./pages/Login'));
const Users = pageChunk(() => import('./pages/Users'));
const ApiKeys = pageChunk(() => import('./pages/ApiKeys'));
const Webhooks = pageChunk(() => import('./pages/Webhooks'));
const Workspaces = pageChunk(() => import('./pages/Workspaces'));
const Profiles = pageChunk(() => import('./pages/Profiles'));
const ProfileDetail = pageChunk(() => import('./pages/ProfileDetail'));
const Documents = pageChunk(() => import('./pages/Documents'));
const Search = pageChunk(() => import('./pages/Search'));
const Sync = pageChunk(() => import('./pages/Sync'));

type Params = Partial<Record<string, string>>;

interface PageRoute {
  path: string;
  page: { preload: () => Promise<void> };
  element: ReactNode;
  /** Starts the requests the page makes first, so they travel while its chunk loads. */
  prefetch?: (params: Params) => void;
}

const ROUTES: PageRoute[] = [
  {
    path: '/',
    page: DagList,
    element: <DagList />,
    prefetch: () => {
      loadDagPage.prefetch(1, DAG_FIRST_SCREEN);
      loadRecentRuns.prefetch();
    },
  },
  { path: '/dags/:fileName', page: DagDetail, element: <DagDetail />, prefetch: (p) => loadDag.prefetch(p.fileName ?? '') },
  { path: '/runs', page: Runs, element: <Runs /> },
  { path: '/runs/:name/:dagRunId', page: RunDetail, element: <RunDetail />, prefetch: (p) => loadRun.prefetch(p.name ?? '', p.dagRunId ?? '') },
  { path: '/queues', page: Queues, element: <Queues /> },
  { path: '/login', page: Login, element: <Login mode="login" /> },
  { path: '/setup', page: Login, element: <Login mode="setup" /> },
  { path: '/admin/users', page: Users, element: <Users /> },
  { path: '/admin/api-keys', page: ApiKeys, element: <ApiKeys /> },
  { path: '/admin/webhooks', page: Webhooks, element: <Webhooks /> },
  { path: '/workspaces', page: Workspaces, element: <Workspaces /> },
  { path: '/docs', page: Documents, element: <Documents /> },
  { path: '/search', page: Search, element: <Search /> },
  { path: '/sync', page: Sync, element: <Sync /> },
  { path: '/profiles', page: Profiles, element: <Profiles /> },
  // `_global` is one of these too: a profile's name cannot begin with `_`.
  { path: '/profiles/:profileName', page: ProfileDetail, element: <ProfileDetail /> },
  { path: '/profiles/_workspaces/:workspace', page: ProfileDetail, element: <ProfileDetail /> },
];

/**
 * The first page of a visit: its requests go out (with the session check) while its chunk
 * loads; resolves when the chunk is in. A path that names no page loads nothing.
 */
export function preloadPage(pathname: string): Promise<void> {
  loadMe.prefetch();
  for (const route of ROUTES) {
    const match = matchPath(route.path, pathname);
    if (match === null) continue;
    route.prefetch?.(match.params);
    return route.page.preload();
  }
  return Promise.resolve();
}

type Theme = 'light' | 'dark';

function useTheme(): [Theme, () => void] {
  const initial = (localStorage.getItem('trellis.theme') as Theme | null) ?? (window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
  const [theme, setTheme] = useState<Theme>(initial);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    localStorage.setItem('trellis.theme', theme);
  }, [theme]);
  return [theme, () => setTheme((t) => (t === 'dark' ? 'light' : 'dark'))];
}

/** Whatever a page throws while rendering is shown as a message, never a blank screen. */
class PageBoundary extends Component<{ children: ReactNode; resetKey: string }, { error?: Error }> {
  override state: { error?: Error } = {};
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  override componentDidUpdate(previous: { resetKey: string }) {
    if (previous.resetKey !== this.props.resetKey && this.state.error !== undefined) this.setState({ error: undefined });
  }
  override render() {
    if (this.state.error !== undefined) {
      return (
        <div className="error" role="alert">
          This page failed: {this.state.error.message}
        </div>
      );
    }
    return this.props.children;
  }
}

function Nav() {
  const { can, principal, signOut } = useAuth();
  const [theme, toggleTheme] = useTheme();
  return (
    <nav className="nav" aria-label="Main">
      <span className="brand">Trellis</span>
      <NavLink to="/" end>
        DAGs
      </NavLink>
      <NavLink to="/runs">Runs</NavLink>
      <NavLink to="/queues">Queues &amp; workers</NavLink>
      <NavLink to="/workspaces">Workspaces</NavLink>
      <NavLink to="/docs">Documents</NavLink>
      <NavLink to="/search">Search</NavLink>
      <NavLink to="/sync">Sync</NavLink>
      {can('run') ? <NavLink to="/profiles">Profiles</NavLink> : null}
      {can('admin') ? (
        <>
          <NavLink to="/admin/users">Users</NavLink>
          <NavLink to="/admin/api-keys">API keys</NavLink>
          <NavLink to="/admin/webhooks">Webhooks</NavLink>
        </>
      ) : null}
      <span className="spacer" />
      {principal !== undefined && principal.kind !== 'anonymous' ? (
        <>
          <span className="muted small">
            {principal.name} ({principal.role})
          </span>
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </>
      ) : null}
      <button type="button" onClick={toggleTheme} aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}>
        {theme === 'dark' ? '☀' : '☾'}
      </button>
    </nav>
  );
}

function Shell() {
  // Pages render before /auth/me answers (actions stay disabled until the role is known): the
  // session check and the page's own requests go out together instead of one after the other.
  const { signedOut } = useAuth();
  const location = useLocation();
  const onAuthPage = location.pathname === '/login' || location.pathname === '/setup';
  if (signedOut && !onAuthPage) return <Navigate to="/login" replace state={{ from: location.pathname }} />;
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      {onAuthPage ? null : <Nav />}
      <main id="main" tabIndex={-1}>
        <PageBoundary resetKey={location.pathname}>
          <Suspense fallback={<Loading what="the page" />}>
            <Routes>
              {ROUTES.map((r) => (
                <Route key={r.path} path={r.path} element={r.element} />
              ))}
              <Route path="*" element={<p role="alert">No page at {location.pathname}.</p>} />
            </Routes>
          </Suspense>
        </PageBoundary>
      </main>
    </>
  );
}

export function App() {
  return (
    <BrowserRouter basename={basePath === '' ? '/' : basePath}>
      <AuthProvider>
        <Shell />
      </AuthProvider>
    </BrowserRouter>
  );
}
