import { basePath } from './api/client';
import { prepareTimeFormats } from './lib/time';
import { startFirstPage } from './page-routes';
import './styles.css';

/** Resolves in a task of its own, after the microtasks queued so far (a request's way to fetch()). */
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

// The entry holds no React: the first page's requests (with the session check) and its chunk
// go out as soon as this small module runs, and travel while the shell (React, the router,
// the app frame; preloaded by the page) is evaluated, instead of after it. The API client
// sends a request only after a few microtasks, so the shell's evaluation and the time formats
// (locale data: tens of milliseconds) wait for a task of their own. A failed chunk load still
// renders (the page then says why).
const firstPage = startFirstPage(window.location.pathname.slice(basePath.length) || '/').catch(() => undefined);
const shell = nextTask().then(() => import('./App'));
setTimeout(prepareTimeFormats, 0);
const [{ mount }, page] = await Promise.all([shell, firstPage]);
const root = document.getElementById('root');
if (root !== null) await mount(root, page);
