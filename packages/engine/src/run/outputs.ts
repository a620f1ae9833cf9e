/** RESULT_VALUE -> resultValue; names that are not SCREAMING_SNAKE_CASE are kept as written. */
export function outputKey(name: string): string {
  if (!/^[A-Z0-9_]+$/.test(name)) return name;
  const words = name.toLowerCase().split('_').filter((w) => w.length > 0);
  return words.map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');
}
