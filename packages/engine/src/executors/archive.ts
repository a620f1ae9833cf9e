import { lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, posix, resolve, sep } from 'node:path';
import AdmZip from 'adm-zip';
import { minimatch } from 'minimatch';
import * as tar from 'tar';
import { BadRequestError } from '@trellis/core';
import { z } from 'zod';
import type { StepExecutionContext, StepExecutionResult, StepExecutor } from './types.js';

type Format = 'tar' | 'tgz' | 'zip';

// Values may arrive as strings after `${VAR}` expansion, so "true" is accepted too.
const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);
const globs = z.union([z.string().transform((g) => [g]), z.array(z.string())]);

const configSchema = z.object({
  source: z.string().min(1).optional(),
  destination: z.string().min(1).optional(),
  format: z.enum(['tar', 'tar.gz', 'tgz', 'zip']).transform((f): Format => (f === 'tar.gz' ? 'tgz' : f)).optional(),
  include: globs.optional(),
  exclude: globs.optional(),
  overwrite: flag.optional(),
});

interface ArchiveOptions {
  /** Absolute, resolved against the step's working directory. */
  source?: string;
  destination?: string;
  format?: Format;
  select: (name: string, isDirectory: boolean) => boolean;
  excluded: (name: string) => boolean;
  overwrite: boolean;
}

interface Entry {
  name: string;
  isDirectory: boolean;
  /** Target of a symbolic or hard link (tar only). */
  link?: { target: string; symbolic: boolean };
}

/** An archive step's config or files refuse the operation: the step fails with this message alone. */
class ArchiveError extends BadRequestError {}

function issuesOf(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ');
}

/**
 * Globs match entry paths (`sub/a.txt`); a pattern without a slash matches the base name at any
 * depth, as in .gitignore. Include patterns choose files; directories are kept only without them.
 * An excluded directory excludes its contents.
 */
function selector(include: string[], exclude: string[]): Pick<ArchiveOptions, 'select' | 'excluded'> {
  const options = { dot: true, matchBase: true };
  const clean = (name: string): string => name.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
  const matches = (path: string, patterns: string[]): boolean => patterns.some((p) => minimatch(path, p, options));
  // Excluding a directory excludes what is under it: every leading part of the path is tried.
  const excluded = (name: string): boolean => {
    const parts = clean(name).split('/');
    return parts.some((_, i) => matches(parts.slice(0, i + 1).join('/'), exclude));
  };
  const select = (name: string, isDirectory: boolean): boolean => {
    if (excluded(name)) return false;
    if (include.length === 0) return true;
    return !isDirectory && matches(clean(name), include);
  };
  return { select, excluded };
}

function parseOptions(ctx: StepExecutionContext): ArchiveOptions {
  const parsed = configSchema.safeParse(ctx.step.config);
  if (!parsed.success) throw new ArchiveError(`invalid archive config: ${issuesOf(parsed.error)}`);
  const config = parsed.data;
  const options: ArchiveOptions = { ...selector(config.include ?? [], config.exclude ?? []), overwrite: config.overwrite ?? false };
  if (config.source !== undefined) options.source = resolve(ctx.workingDir, config.source);
  if (config.destination !== undefined) options.destination = resolve(ctx.workingDir, config.destination);
  if (config.format !== undefined) options.format = config.format;
  return options;
}

function formatOf(file: string, explicit: Format | undefined): Format {
  if (explicit !== undefined) return explicit;
  const name = file.toLowerCase();
  if (name.endsWith('.tar.gz') || name.endsWith('.tgz')) return 'tgz';
  if (name.endsWith('.tar')) return 'tar';
  if (name.endsWith('.zip')) return 'zip';
  throw new ArchiveError(`cannot tell the archive format of ${file}: set config.format (tar, tar.gz, tgz or zip)`);
}

function required(value: string | undefined, what: string, operation: string): string {
  if (value === undefined) throw new ArchiveError(`archive ${operation} needs config.${what}`);
  return value;
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root + sep);
}

async function readEntries(file: string, format: Format): Promise<Entry[]> {
  if (format === 'zip') return new AdmZip(file).getEntries().map((e) => ({ name: e.entryName, isDirectory: e.isDirectory }));
  const entries: Entry[] = [];
  await tar.list({
    file,
    strict: true,
    onReadEntry: (e) => {
      const entry: Entry = { name: e.path, isDirectory: e.type === 'Directory' };
      if ((e.type === 'SymbolicLink' || e.type === 'Link') && e.linkpath !== undefined) entry.link = { target: e.linkpath, symbolic: e.type === 'SymbolicLink' };
      entries.push(entry);
    },
  });
  return entries;
}

/** Why an entry would write outside `root` (zip-slip), or undefined when it stays inside. */
function escapeOf(root: string, entry: Entry): string | undefined {
  const target = resolve(root, entry.name);
  if (!inside(root, target)) return entry.name;
  if (entry.link === undefined) return undefined;
  // A symlink resolves from its own directory, a hard link from the archive root.
  const linked = resolve(entry.link.symbolic ? dirname(target) : root, entry.link.target);
  return inside(root, linked) ? undefined : `${entry.name} -> ${entry.link.target}`;
}

function refuseEscapes(root: string, entries: Entry[]): void {
  const escaping = entries.map((e) => escapeOf(root, e)).filter((e) => e !== undefined);
  if (escaping.length > 0) throw new ArchiveError(`refusing to extract: ${escaping.length} entries would land outside ${root}: ${escaping.slice(0, 5).join(', ')}`);
}

async function refuseOverwrites(root: string, entries: Entry[]): Promise<void> {
  const existing: string[] = [];
  for (const entry of entries) if (!entry.isDirectory && (await exists(resolve(root, entry.name)))) existing.push(entry.name);
  if (existing.length > 0) throw new ArchiveError(`refusing to overwrite ${existing.length} existing files (set config.overwrite: true): ${existing.slice(0, 5).join(', ')}`);
}

async function extractZip(file: string, root: string, chosen: Entry[], overwrite: boolean): Promise<void> {
  const names = new Set(chosen.map((e) => e.name));
  const zip = new AdmZip(file);
  for (const entry of zip.getEntries()) {
    if (!names.has(entry.entryName)) continue;
    // adm-zip extracts a directory entry with all its children, bypassing the filters: create it instead.
    if (entry.isDirectory) await mkdir(resolve(root, entry.entryName), { recursive: true });
    else zip.extractEntryTo(entry, root, true, overwrite, true);
  }
}

async function extract(ctx: StepExecutionContext, options: ArchiveOptions): Promise<void> {
  const source = required(options.source, 'source', 'extract');
  const root = options.destination ?? ctx.workingDir;
  const format = formatOf(source, options.format);
  const entries = await readEntries(source, format);
  refuseEscapes(root, entries);
  const chosen = entries.filter((e) => options.select(e.name, e.isDirectory));
  if (!options.overwrite) await refuseOverwrites(root, chosen);
  await mkdir(root, { recursive: true });
  if (format === 'zip') await extractZip(source, root, chosen, options.overwrite);
  else await tar.extract({ file: source, cwd: root, strict: true, filter: (path, entry) => options.select(path, 'type' in entry ? entry.type === 'Directory' : entry.isDirectory()) });
  ctx.stderr.write(`archive: extracted ${chosen.length} of ${entries.length} entries from ${source} to ${root}\n`);
}

/** Entry names under `root`, directories before their contents; excluded directories are not entered. */
async function collect(root: string, options: ArchiveOptions, skip: string): Promise<Entry[]> {
  const out: Entry[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    const children = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const child of children) {
      const name = prefix === '' ? child.name : posix.join(prefix, child.name);
      const full = join(dir, child.name);
      if (full === skip) continue; // the archive being written, when it lies inside the source
      if (!child.isDirectory()) {
        if (options.select(name, false)) out.push({ name, isDirectory: false });
      } else if (!options.excluded(name)) {
        if (options.select(name, true)) out.push({ name, isDirectory: true });
        await walk(full, name);
      }
    }
  };
  await walk(root, '');
  return out;
}

async function writeZip(cwd: string, entries: Entry[], destination: string): Promise<void> {
  const zip = new AdmZip();
  for (const entry of entries) {
    if (entry.isDirectory) zip.addFile(`${entry.name}/`, Buffer.alloc(0));
    else zip.addLocalFile(join(cwd, entry.name), posix.dirname(entry.name) === '.' ? '' : posix.dirname(entry.name));
  }
  await zip.writeZipPromise(destination);
}

async function create(ctx: StepExecutionContext, options: ArchiveOptions): Promise<void> {
  const source = required(options.source, 'source', 'create');
  const destination = required(options.destination, 'destination', 'create');
  const format = formatOf(destination, options.format);
  if (!options.overwrite && (await exists(destination))) throw new ArchiveError(`refusing to overwrite ${destination} (set config.overwrite: true)`);
  const isDirectory = (await stat(source)).isDirectory();
  const cwd = isDirectory ? source : dirname(source);
  const entries = isDirectory ? await collect(source, options, destination) : [{ name: basename(source), isDirectory: false }];
  await mkdir(dirname(destination), { recursive: true });
  if (format === 'zip') await writeZip(cwd, entries, destination);
  // Entries are listed one by one (directories too), so tar must not add a directory's contents again.
  else await tar.create({ file: destination, cwd, gzip: format === 'tgz', portable: true, noDirRecurse: true }, entries.map((e) => e.name));
  ctx.stderr.write(`archive: created ${destination} (${entries.length} entries)\n`);
}

async function list(ctx: StepExecutionContext, options: ArchiveOptions): Promise<void> {
  const source = required(options.source, 'source', 'list');
  const names = (await readEntries(source, formatOf(source, options.format))).filter((e) => options.select(e.name, e.isDirectory)).map((e) => e.name);
  if (names.length > 0) ctx.stdout.write(`${names.join('\n')}\n`);
}

const operations: Record<string, (ctx: StepExecutionContext, options: ArchiveOptions) => Promise<void>> = { create, extract, list };

/**
 * `type: archive`: the command is `create`, `extract` or `list`; config source, destination,
 * format (tar, tar.gz/tgz, zip; else from the file name), include/exclude globs and overwrite
 * (default false). Paths are relative to the working directory; an extract destination defaults to it.
 */
export const archiveExecutor: StepExecutor = {
  type: 'archive',
  async run(ctx): Promise<StepExecutionResult> {
    const name = (ctx.step.commands[0] ?? '').trim();
    try {
      const operation = operations[name];
      if (operation === undefined) throw new ArchiveError(`unknown archive operation "${name}" (create, extract or list)`);
      await operation(ctx, parseOptions(ctx));
      return { exitCode: 0 };
    } catch (caught) {
      const error = caught instanceof ArchiveError ? caught.message : `archive ${name} failed: ${caught instanceof Error ? caught.message : String(caught)}`;
      ctx.stderr.write(`archive: ${error}\n`);
      return { exitCode: 1, error };
    }
  },
};
