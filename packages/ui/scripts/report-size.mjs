#!/usr/bin/env node
// Prints what a first visit loads, from Vite's manifest: the shell (entry, the app frame it
// imports at once, and their static imports) plus one page's chunks (each page is its own
// dynamic import), gzipped, for the page that weighs most, against the 300 KB budget. The
// YAML editor loads only on the spec tab.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const dist = join(import.meta.dirname, '..', 'dist');
const BUDGET = 300 * 1024;
const manifest = JSON.parse(readFileSync(join(dist, '.vite', 'manifest.json'), 'utf8'));
const gz = (file) => gzipSync(readFileSync(join(dist, file))).length;
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

/** The files a chunk needs before it runs: itself and its static imports, transitively. */
function closure(key, seen = new Set()) {
  if (seen.has(key)) return seen;
  seen.add(key);
  for (const dep of manifest[key].imports ?? []) closure(dep, seen);
  return seen;
}
const size = (keys) => [...keys].reduce((sum, key) => sum + gz(manifest[key].file), 0);

const entry = Object.keys(manifest).find((key) => manifest[key].isEntry);
// The entry imports the app frame (React, the router) at once, dynamically so that the first
// requests go out before it is evaluated: both are the shell every visit loads.
const shell = closure(entry);
for (const key of manifest[entry].dynamicImports ?? []) closure(key, shell);
const pageKeys = [...new Set([...shell].flatMap((key) => manifest[key].dynamicImports ?? []))].filter((key) => key.startsWith('src/pages/'));
const pages = pageKeys.map((key) => {
  const files = closure(key, new Set());
  for (const key2 of shell) files.delete(key2);
  return { page: manifest[key].name ?? key, bytes: size(files) };
});
pages.sort((a, b) => b.bytes - a.bytes);
const heaviest = pages[0] ?? { page: '(none)', bytes: 0 };
const first = size(shell) + heaviest.bytes;
console.log(`ui: first load at most ${kb(first)} of gzipped JavaScript: shell ${kb(size(shell))} + heaviest page ${heaviest.page} ${kb(heaviest.bytes)} (budget ${kb(BUDGET)})`);
for (const p of pages) console.log(`  page ${p.page.padEnd(12)} ${kb(p.bytes)}`);
if (first > BUDGET) {
  console.error('ui: the first load is over budget');
  process.exit(1);
}
