#!/usr/bin/env node
// The `trellis` command as npm links it (node_modules/.bin/trellis, `npx trellis`). It exists
// before the first build, so npm can link it at install time; it runs the compiled CLI, or says
// how to build it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(`trellis: ${fileURLToPath(main)} is not built yet: run \`npm run build\` in the repository first\n`);
  process.exit(1);
}
await import(main.href);
