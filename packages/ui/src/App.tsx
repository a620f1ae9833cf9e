import { Component, lazy, Suspense, useEffect, useState, type ReactNode } from 'react';
import { BrowserRouter, Navigate, NavLink, Route, Routes, useLocation } from 'react-router';
import { basePath } from './api/client';
import { AuthProvider, useAuth } from './lib/auth';
import { Loading } from './components/common';

// One chunk per page: the first load carries only the shell and the page it opens.
const DagList = lazy(() => import('./pages/DagList'));
const DagDetail = lazy(() => import('./pages/DagDetail'));
const RunDetail = lazy(() => import('./pages/RunDetail'));
const Runs = lazy(() => import('./pages/Runs'));
const Queues = lazy(() => import('./pages/Queues'));
const Login = lazy(() => import('./pages/Login'));
const Users = lazy(() => import('./pages/Users'));
const ApiKeys = lazy(() => import('./pages/ApiKeys'));
const Webhooks = lazy(() => import('./pages/Webhooks'));

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
  const { signedOut, principal } = useAuth();
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
            {principal === undefined && !signedOut ? (
              <Loading what="your session" />
            ) : (
              <Routes>
                <Route path="/" element={<DagList />} />
                <Route path="/dags/:fileName" element={<DagDetail />} />
                <Route path="/runs" element={<Runs />} />
                <Route path="/runs/:name/:dagRunId" element={<RunDetail />} />
                <Route path="/queues" element={<Queues />} />
                <Route path="/login" element={<Login mode="login" />} />
                <Route path="/setup" element={<Login mode="setup" />} />
                <Route path="/admin/users" element={<Users />} />
                <Route path="/admin/api-keys" element={<ApiKeys />} />
                <Route path="/admin/webhooks" element={<Webhooks />} />
                <Route path="*" element={<p role="alert">No page at {location.pathname}.</p>} />
              </Routes>
            )}
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
