import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { basePath } from './api/client';
import { App, preloadPage } from './App';
import { prepareTimeFormats } from './lib/time';
import './styles.css';

const root = document.getElementById('root');
const path = window.location.pathname.slice(basePath.length) || '/';
// The first page's chunk (and its data) before the first render; a failed load still renders
// (the page then says why). The time formats are made while they travel: in a task of their
// own, since the API client sends a request only after a few microtasks, which wait until
// this module's synchronous part is done (tens of milliseconds on a busy machine).
const firstPage = preloadPage(path);
setTimeout(prepareTimeFormats, 0);
await firstPage.catch(() => undefined);
if (root !== null) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
