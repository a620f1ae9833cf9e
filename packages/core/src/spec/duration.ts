const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Parses durations such as `90s`, `30m`, `6h`, `2d12h`, `1h30m`; undefined when malformed or zero. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(\d+(ms|s|m|h|d|w))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) {
    total += Number(match[1]) * (UNIT_MS[match[2] ?? ''] ?? 0);
  }
  return total > 0 && Number.isSafeInteger(total) ? total : undefined;
}
