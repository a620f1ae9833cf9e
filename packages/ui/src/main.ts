import { basePath } from './api/client';
import { PAGE_CHUNKS, startFirstRequests } from './page-routes';
import './styles.css';

// The entry holds no UI framework: the first page's requests (with the session check) go out
// as soon as this small module runs, and travel while the page's chunk and the shell (Preact,
// the router, the app frame; the page preloads its files) load and are evaluated.
const page = startFirstRequests(window.location.pathname.slice(basePath.length) || '/');
// The API client calls fetch() only after a few microtasks; starting a chunk's import inserts
// its preload links at once, which takes the main thread for milliseconds to tens of them.
await new Promise((resolve) => setTimeout(resolve, 0));
const chunks = Promise.all([import('./App'), page !== undefined ? PAGE_CHUNKS[page]().catch(() => undefined) : undefined]);
const [{ mount }] = await chunks;
const root = document.getElementById('root');
if (root !== null) await mount(root, page);
