/**
 * Splits a command line written in a step (`SET greeting "hello world"`) into its words:
 * whitespace separates words, single quotes keep text as it is, double quotes keep text with
 * backslash escapes. No variables, globs or operators: the words go to a server, not a shell.
 * A string is the message for an unbalanced quote.
 */
export function splitCommandLine(line: string): string[] | string {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < line.length) word += line.charAt(++i);
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c === '\\' && i + 1 < line.length ? line.charAt(++i) : c;
      inWord = true;
    }
  }
  if (quote !== undefined) return `unbalanced ${quote === '"' ? 'double' : 'single'} quote`;
  if (inWord) words.push(word);
  return words;
}
