import { Component, StrictMode, Suspense, useEffect, useState, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, NavLink, Route, Routes, useLocation } from 'react-router';
import { basePath } from './api/client';
import { AuthProvider, useAuth } from './lib/auth';
import { Loading } from './components/common';
import { pageChunk } from './lib/pages';
import { PAGE_CHUNKS, PAGE_ROUTES, type PageName, type PagePath } from './page-routes';

const PAGES = {
  DagList: pageChunk(PAGE_CHUNKS.DagList),
  DagDetail: pageChunk(PAGE_CHUNKS.DagDetail),
  RunDetail: pageChunk(PAGE_CHUNKS.RunDetail),
  Runs: pageChunk(PAGE_CHUNKS.Runs),
  Queues: pageChunk(PAGE_CHUNKS.Queues),
  Login: pageChunk(PAGE_CHUNKS.Login),
  Users: pageChunk(PAGE_CHUNKS.Users),
  ApiKeys: pageChunk(PAGE_CHUNKS.ApiKeys),
  Webhooks: pageChunk(PAGE_CHUNKS.Webhooks),
  Workspaces: pageChunk(PAGE_CHUNKS.Workspaces),
  Profiles: pageChunk(PAGE_CHUNKS.Profiles),
  ProfileDetail: pageChunk(PAGE_CHUNKS.ProfileDetail),
  Documents: pageChunk(PAGE_CHUNKS.Documents),
  Search: pageChunk(PAGE_CHUNKS.Search),
  Sync: pageChunk(PAGE_CHUNKS.Sync),
} satisfies Record<PageName, { preload: () => Promise<void> }>;

/** What each path of the table renders (the type asks for every path). */
const ELEMENTS: Record<PagePath, ReactNode> = {
  '/': <PAGES.DagList />,
  '/dags/:fileName': <PAGES.DagDetail />,
  '/runs': <PAGES.Runs />,
  '/runs/:name/:dagRunId': <PAGES.RunDetail />,
  '/queues': <PAGES.Queues />,
  '/login': <PAGES.Login mode="login" />,
  '/setup': <PAGES.Login mode="setup" />,
  '/admin/users': <PAGES.Users />,
  '/admin/api-keys': <PAGES.ApiKeys />,
  '/admin/webhooks': <PAGES.Webhooks />,
  '/workspaces': <PAGES.Workspaces />,
  '/docs': <PAGES.Documents />,
  '/search': <PAGES.Search />,
  '/sync': <PAGES.Sync />,
  '/profiles': <PAGES.Profiles />,
  '/profiles/:profileName': <PAGES.ProfileDetail />,
  '/profiles/_workspaces/:workspace': <PAGES.ProfileDetail />,
};


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
              {PAGE_ROUTES.map(({ path }) => (
                <Route key={path} path={path} element={ELEMENTS[path]} />
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

/**
 * Renders the app into `root`. The first page's chunk, which the entry has loaded, is taken in
 * first, so that page renders at once instead of behind a Suspense fallback; one that failed to
 * load still renders (the page then says why).
 */
export async function mount(root: HTMLElement, firstPage: PageName | undefined): Promise<void> {
  if (firstPage !== undefined) await PAGES[firstPage].preload().catch(() => undefined);
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
