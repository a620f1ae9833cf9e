import { Component, Suspense, useEffect, useState, type ReactNode } from 'react';
import { BrowserRouter, matchPath, Navigate, NavLink, Route, Routes, useLocation } from 'react-router';
import { basePath } from './api/client';
import { AuthProvider, useAuth } from './lib/auth';
import { Loading } from './components/common';
import { pageChunk } from './lib/pages';

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

const ROUTES: Array<{ path: string; page: { preload: () => Promise<void> }; element: ReactNode }> = [
  { path: '/', page: DagList, element: <DagList /> },
  { path: '/dags/:fileName', page: DagDetail, element: <DagDetail /> },
  { path: '/runs', page: Runs, element: <Runs /> },
  { path: '/runs/:name/:dagRunId', page: RunDetail, element: <RunDetail /> },
  { path: '/queues', page: Queues, element: <Queues /> },
  { path: '/login', page: Login, element: <Login mode="login" /> },
  { path: '/setup', page: Login, element: <Login mode="setup" /> },
  { path: '/admin/users', page: Users, element: <Users /> },
  { path: '/admin/api-keys', page: ApiKeys, element: <ApiKeys /> },
  { path: '/admin/webhooks', page: Webhooks, element: <Webhooks /> },
];

/** Loads the chunk of the page at `pathname` (under the base path), if it names one. */
export function preloadPage(pathname: string): Promise<void> {
  const route = ROUTES.find((r) => matchPath(r.path, pathname) !== null);
  return route !== undefined ? route.page.preload() : Promise.resolve();
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
