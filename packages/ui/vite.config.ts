import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Relative asset URLs: the coordinator writes a <base href> for its base path into the page,
// so one build serves at `/` and under any mount.
export default defineConfig({
  base: './',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, manifest: true, chunkSizeWarningLimit: 600 },
});
