/**
 * Splits a shell-style parameter string into words: whitespace separates, single quotes are
 * literal, double quotes allow `\"` and `\\`. Returns undefined on an unterminated quote.
 */
export function splitShellWords(text: string): string[] | undefined {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i] ?? '';
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else current += ch;
      continue;
    }
    if (quote === '"') {
      if (ch === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) {
        current += text[i + 1] ?? '';
        i += 1;
      } else if (ch === '"') quote = undefined;
      else current += ch;
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (quote !== undefined) return undefined;
  if (inWord) words.push(current);
  return words;
}

/** Double-quotes a value for a shell-style string, escaping `"` and `\`. */
export function quoteShellValue(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
