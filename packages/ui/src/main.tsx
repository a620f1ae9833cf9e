import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { basePath } from './api/client';
import { App, preloadPage } from './App';
import './styles.css';

const root = document.getElementById('root');
const path = window.location.pathname.slice(basePath.length) || '/';
// The first page's chunk before the first render; a failed load still renders (the page then says why).
await preloadPage(path).catch(() => undefined);
if (root !== null) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
