/**
 * Reads `path` (object keys and array indexes) out of a JSON document. Strings come out raw, every
 * other value as compact JSON; undefined when the text is not JSON or the path does not exist.
 * Only own properties count (`__proto__`, `constructor` are not paths), and arrays take only
 * indexes (`length` is not a field).
 */
export function readJsonPath(json: string, path: readonly string[]): string | undefined {
  let current: unknown;
  try {
    current = JSON.parse(json);
  } catch {
    return undefined;
  }
  for (const segment of path) {
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(segment)) return undefined;
      current = current[Number(segment)];
    } else if (current !== null && typeof current === 'object' && Object.hasOwn(current, segment)) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      return undefined;
    }
    if (current === undefined) return undefined;
  }
  return typeof current === 'string' ? current : JSON.stringify(current);
}
