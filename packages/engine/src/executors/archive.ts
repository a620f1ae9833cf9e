import { mkdir, readdir, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import * as tar from 'tar';
import AdmZip from 'adm-zip';
import { z } from 'zod';
import type { StepExecutionContext, StepExecutor } from './types.js';

const configSchema = z.object({
  source: z.string().min(1).optional(),
  destination: z.string().min(1).optional(),
  format: z.enum(['tar', 'tar.gz', 'tgz', 'zip']).optional(),
});

type Format = 'tar' | 'tar.gz' | 'zip';

function formatOf(file: string, explicit: string | undefined): Format | undefined {
  const chosen = explicit ?? file;
  if (/(^|\.)(tar\.gz|tgz)$/.test(chosen)) return 'tar.gz';
  if (/(^|\.)tar$/.test(chosen)) return 'tar';
  if (/(^|\.)zip$/.test(chosen)) return 'zip';
  return undefined;
}

/** Refuses any entry that would land outside the destination (zip-slip). */
function insideDestination(destination: string, entry: string): boolean {
  const target = resolve(destination, entry);
  return target === destination || target.startsWith(destination + sep);
}

async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else out.push(relative(root, full));
    }
  };
  await walk(root);
  return out.sort();
}

async function create(source: string, destination: string, format: Format, ctx: StepExecutionContext): Promise<void> {
  await mkdir(dirname(destination), { recursive: true });
  const info = await stat(source);
  const cwd = info.isDirectory() ? source : dirname(source);
  const files = info.isDirectory() ? await listFiles(source) : [relative(cwd, source)];
  if (format === 'zip') {
    const zip = new AdmZip();
    for (const file of files) zip.addLocalFile(join(cwd, file), dirname(file) === '.' ? '' : dirname(file));
    await zip.writeZipPromise(destination);
  } else {
    await tar.create({ file: destination, cwd, gzip: format === 'tar.gz', portable: true }, files);
  }
  ctx.stderr.write(`created ${destination} (${files.length} files)\n`);
}

async function entriesOf(file: string, format: Format): Promise<string[]> {
  if (format === 'zip') return new AdmZip(file).getEntries().map((e) => e.entryName);
  const names: string[] = [];
  await tar.list({ file, onReadEntry: (entry) => names.push(entry.path) });
  return names;
}

async function extract(file: string, destination: string, format: Format, ctx: StepExecutionContext): Promise<void> {
  const entries = await entriesOf(file, format);
  const escaping = entries.filter((name) => isAbsolute(name) || !insideDestination(destination, name));
  if (escaping.length > 0) throw new Error(`refusing to extract: entries would land outside ${destination}: ${escaping.slice(0, 5).join(', ')}`);
  await mkdir(destination, { recursive: true });
  if (format === 'zip') new AdmZip(file).extractAllTo(destination, true);
  else await tar.extract({ file, cwd: destination, strict: true });
  ctx.stderr.write(`extracted ${entries.length} entries to ${destination}\n`);
}

/** `type: archive`: command `create`, `extract` or `list`; config source, destination, format. */
export const archiveExecutor: StepExecutor = {
  type: 'archive',
  async run(ctx) {
    const parsed = configSchema.safeParse(ctx.step.config);
    const operation = (ctx.step.commands[0] ?? '').trim();
    const fail = (error: string): { exitCode: number; error: string } => {
      ctx.stderr.write(`${error}\n`);
      return { exitCode: 1, error };
    };
    if (!parsed.success) return fail(`invalid archive config: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    const at = (path: string | undefined): string | undefined => (path === undefined ? undefined : resolve(ctx.workingDir, path));
    const source = at(parsed.data.source);
    const destination = at(parsed.data.destination);
    try {
      if (operation === 'create') {
        if (source === undefined || destination === undefined) return fail('archive create needs config.source and config.destination');
        const format = formatOf(destination, parsed.data.format);
        if (format === undefined) return fail(`cannot tell the archive format of ${destination}: set config.format (tar, tar.gz, zip)`);
        await create(source, destination, format, ctx);
      } else if (operation === 'extract' || operation === 'list') {
        if (source === undefined) return fail(`archive ${operation} needs config.source`);
        const format = formatOf(source, parsed.data.format);
        if (format === undefined) return fail(`cannot tell the archive format of ${source}: set config.format (tar, tar.gz, zip)`);
        if (operation === 'list') for (const name of await entriesOf(source, format)) ctx.stdout.write(`${name}\n`);
        else await extract(source, destination ?? ctx.workingDir, format, ctx);
      } else return fail(`unknown archive operation "${operation}" (create, extract or list)`);
      return { exitCode: 0 };
    } catch (error) {
      return fail((error as Error).message);
    }
  },
};
