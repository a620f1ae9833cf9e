import { defineConfig, type Plugin, type Rollup } from 'vite';

/**
 * The entry imports the app shell (src/App.tsx: Preact, the router, the frame) dynamically, so
 * a visit's first requests go out before the shell is evaluated. This writes the shell's
 * chunks into the page as preload links, so they download together with the entry rather than
 * after it has run. Plain preloads, not modulepreload: the browser compiles a modulepreload on
 * the page's main thread as soon as it arrives, which held the entry (and the requests) back by
 * tens of milliseconds.
 */
function preloadShell(shellSource: string): Plugin {
  return {
    name: 'trellis-preload-shell',
    transformIndexHtml: {
      order: 'post',
      handler(_html, { bundle, chunk }) {
        // The dev server serves modules one by one: nothing to preload.
        if (bundle === undefined || chunk === undefined) return [];
        const chunks = new Map(Object.values(bundle).flatMap((o): Array<[string, Rollup.OutputChunk]> => (o.type === 'chunk' ? [[o.fileName, o]] : [])));
        const closure = (file: string, seen: Set<string>): Set<string> => {
          if (seen.has(file)) return seen;
          seen.add(file);
          for (const dep of chunks.get(file)?.imports ?? []) closure(dep, seen);
          return seen;
        };
        const shell = [...chunks.values()].find((c) => c.facadeModuleId?.endsWith(shellSource));
        if (shell === undefined) throw new Error(`preloadShell: no chunk for ${shellSource}`);
        const loadedByEntry = closure(chunk.fileName, new Set());
        return [...closure(shell.fileName, new Set())]
          .filter((file) => !loadedByEntry.has(file))
          .map((file) => ({ tag: 'link', attrs: { rel: 'preload', as: 'script', crossorigin: true, href: `./${file}` }, injectTo: 'head' as const }));
      },
    },
  };
}

// Relative asset URLs: the coordinator writes a <base href> for its base path into the page,
// so one build serves at `/` and under any mount.
// The pages are written against React's API (and typed with its types) but run on Preact's
// compatibility layer: the shell is a third of React's size to download, compile and run, which
// took about a fifth off the first render of the DAG list and the run page (`npm run bench
// -w packages/ui -- --baseline <a React build>`). The router and the virtual list import
// `react` too, so the aliases apply to them as well.
export default defineConfig({
  base: './',
  plugins: [preloadShell('/src/App.tsx')],
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: {
    alias: [
      { find: /^react-dom\/client$/, replacement: 'preact/compat/client' },
      { find: /^react-dom$/, replacement: 'preact/compat' },
      { find: /^react$/, replacement: 'preact/compat' },
    ],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    manifest: true,
    chunkSizeWarningLimit: 600,
    // A first visit's files in few requests: the browser opens six connections to the service
    // and, left to itself, the bundler made some twenty small shared chunks, whose second and
    // third rounds held the entry's own imports (and so the first API requests) back by tens of
    // milliseconds. `boot` is what the entry needs to send those requests; `shell` is the frame,
    // the router, Preact and what several pages share; each page keeps a chunk of its own.
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            { name: 'boot', test: /src\/(api\/client|api\/loaders|lib\/prefetch|lib\/time|page-routes)\.ts|preload-helper|openapi-fetch/, priority: 20 },
            { name: 'shell', test: /src\/(App\.tsx|lib\/|components\/(common|Graph|StartDialog)|api\/events)|node_modules\/(preact|react-router|@tanstack|cookie|set-cookie)/, priority: 10 },
          ],
        },
      },
    },
  },
});
