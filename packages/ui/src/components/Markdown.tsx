import type { ReactNode } from 'react';

/**
 * A document's markdown as React elements: headings, paragraphs, lists, fenced code, quotes,
 * inline code, bold, italics and links. Built as elements, never as HTML, so a document cannot
 * inject markup or script into the page. The frontmatter block is not shown (its title is).
 */
export function Markdown({ text }: { text: string }) {
  return <div className="markdown">{blocks(stripFrontmatter(text))}</div>;
}

function stripFrontmatter(text: string): string {
  const match = /^---\r?\n[\s\S]*?\r?\n---\r?\n?/.exec(text);
  return match !== null ? text.slice(match[0].length) : text;
}

const INLINE = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*]+\*|_[^_]+_)|(\[[^\]]+\]\([^)\s]+\))/g;

function inline(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    const [token] = match;
    const at = match.index;
    if (at > last) out.push(text.slice(last, at));
    if (match[1] !== undefined) out.push(<code key={at}>{token.slice(1, -1)}</code>);
    else if (match[2] !== undefined) out.push(<strong key={at}>{token.slice(2, -2)}</strong>);
    else if (match[3] !== undefined) out.push(<em key={at}>{token.slice(1, -1)}</em>);
    else {
      const [, label = '', href = ''] = /^\[([^\]]+)\]\(([^)\s]+)\)$/.exec(token) ?? [];
      // Only web and relative links: a `javascript:` URL in a document must not become clickable.
      out.push(/^(https?:|\/|#|\.)/.test(href) ? <a key={at} href={href}>{label}</a> : label);
    }
    last = at + token.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function blocks(text: string): ReactNode[] {
  const lines = text.split(/\r?\n/);
  const out: ReactNode[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    const key = out.length;
    if (line.startsWith('```')) {
      const code: string[] = [];
      for (i += 1; i < lines.length && !(lines[i] ?? '').startsWith('```'); i += 1) code.push(lines[i] ?? '');
      out.push(<pre key={key}>{code.join('\n')}</pre>);
      i += 1;
    } else if (/^#{1,6} /.test(line)) {
      const level = Math.min(6, (/^#+/.exec(line)?.[0].length ?? 1) + 1);
      const Heading = `h${level}` as 'h2';
      out.push(<Heading key={key}>{inline(line.replace(/^#+ /, ''))}</Heading>);
      i += 1;
    } else if (/^\s*([-*]|\d+\.) /.test(line)) {
      const ordered = /^\s*\d+\. /.test(line);
      const items: string[] = [];
      for (; i < lines.length && /^\s*([-*]|\d+\.) /.test(lines[i] ?? ''); i += 1) items.push((lines[i] ?? '').replace(/^\s*([-*]|\d+\.) /, ''));
      const List = ordered ? 'ol' : 'ul';
      out.push(<List key={key}>{items.map((item, n) => <li key={n}>{inline(item)}</li>)}</List>);
    } else if (line.startsWith('>')) {
      const quote: string[] = [];
      for (; i < lines.length && (lines[i] ?? '').startsWith('>'); i += 1) quote.push((lines[i] ?? '').replace(/^>\s?/, ''));
      out.push(<blockquote key={key}>{inline(quote.join(' '))}</blockquote>);
    } else if (line.trim() === '') {
      i += 1;
    } else {
      const para: string[] = [];
      for (; i < lines.length && (lines[i] ?? '').trim() !== '' && !/^(#{1,6} |```|>|\s*([-*]|\d+\.) )/.test(lines[i] ?? ''); i += 1) para.push(lines[i] ?? '');
      out.push(<p key={key}>{inline(para.join(' '))}</p>);
    }
  }
  return out;
}
