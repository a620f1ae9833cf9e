import { createHash } from 'node:crypto';
import { isAbsolute, join, relative, sep } from 'node:path';
import { InternalError } from '../errors/domain-errors.js';

/** Longest segment made from a name; file systems refuse names over 255 bytes. */
const MAX_SEGMENT_LENGTH = 200;

/**
 * A path built from a name would leave the folder it belongs in. Names are made safe before
 * they become segments, so reaching this is a fault of ours, not of the request.
 */
export class PathEscapeError extends InternalError {
  constructor(root: string, segments: string[]) {
    super(`refusing a path outside ${root}: ${segments.join('/')}`);
  }
}

/**
 * A DAG, run or step name as one file-name segment: characters outside `[A-Za-z0-9_.-]` become
 * `_`, and a leading `.` becomes `_`, so `.` and `..` (valid names) name a folder or file of
 * their own instead of the current or parent one. A long name keeps its first characters and
 * a hash of the whole name.
 */
export function nameSegment(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^\./, '_') || '_';
  if (safe.length <= MAX_SEGMENT_LENGTH) return safe;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 16);
  return `${safe.slice(0, MAX_SEGMENT_LENGTH - hash.length - 1)}~${hash}`;
}

/** An empty, `.` or `..` segment: `join` and `relative` would change a path that has one. */
const ODD_SEGMENT = /\/\/|\/\.\.?(?:\/|$)/;

const SLASH = 47;

/** An absolute POSIX path that `join` and `relative` leave as it is: no odd segment, no trailing `/`. */
function isNormalAbsolute(path: string): boolean {
  return path.charCodeAt(0) === SLASH && (path.length === 1 || path.charCodeAt(path.length - 1) !== SLASH) && !ODD_SEGMENT.test(path);
}

/** `path` relative to `root` when it lies strictly under it, otherwise undefined. */
export function relativeUnder(root: string, path: string): string | undefined {
  // Every log line and file a run writes asks this; `relative` resolves both paths against the
  // working directory each time. Two normalised absolute POSIX paths need only a prefix test.
  if (sep === '/' && isNormalAbsolute(root) && isNormalAbsolute(path)) {
    const start = root === '/' ? 1 : root.length + 1;
    return path.length > start && path.startsWith(root) && path.charCodeAt(start - 1) === SLASH ? path.slice(start) : undefined;
  }
  const rel = relative(root, path);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return rel;
}

/**
 * `root` joined with segments made from names, checked to stay strictly under `root`. Every
 * path built from a DAG, run or step name goes through here (with nameSegment for the names).
 */
export function confinedPath(root: string, ...segments: string[]): string {
  const path = join(root, ...segments);
  if (relativeUnder(root, path) === undefined) throw new PathEscapeError(root, segments);
  return path;
}
