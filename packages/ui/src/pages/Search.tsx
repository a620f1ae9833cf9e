import { useEffect, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { ErrorNote, Loading, Page, useAction } from '../components/common';

type Scope = 'dags' | 'docs';
type Match = Schemas['SearchMatch'];

/** One hit of either search, as the page shows it. */
interface Hit {
  key: string;
  label: string;
  link: string;
  matches: Match[];
  nextMatchesCursor: string | undefined;
}

interface Results {
  hits: Hit[];
  nextCursor: string | undefined;
}

const PAGE_SIZE = 20;

async function searchPage(scope: Scope, q: string, cursor: string | undefined): Promise<Results> {
  const query = { q, limit: PAGE_SIZE, ...(cursor !== undefined ? { cursor } : {}) };
  if (scope === 'dags') {
    const page = await unwrap(api.GET('/search/dags', { params: { query } }));
    const hits = page.results.map((r) => ({ key: r.fileName, label: r.name === r.fileName ? r.fileName : `${r.name} (${r.fileName})`, link: `/dags/${encodeURIComponent(r.fileName)}?tab=spec`, matches: r.matches, nextMatchesCursor: r.nextMatchesCursor }));
    return { hits, nextCursor: page.nextCursor };
  }
  const page = await unwrap(api.GET('/search/docs', { params: { query } }));
  const hits = page.results.map((r) => ({ key: r.id, label: `${r.title} (${r.id})`, link: `/docs?path=${encodeURIComponent(r.id)}`, matches: r.matches, nextMatchesCursor: r.nextMatchesCursor }));
  return { hits, nextCursor: page.nextCursor };
}

/** The lines after those shown: one DAG's or one document's next page of matches. */
async function moreMatches(scope: Scope, key: string, q: string, cursor: string) {
  return scope === 'dags'
    ? unwrap(api.GET('/search/dags/{fileName}/matches', { params: { path: { fileName: key }, query: { q, cursor } } }))
    : unwrap(api.GET('/search/docs/matches', { params: { query: { path: key, q, cursor } } }));
}

function HitView({ hit, onMore, busy }: { hit: Hit; onMore: () => void; busy: boolean }) {
  return (
    <li>
      <Link to={hit.link}>{hit.label}</Link>
      <table className="matches">
        <caption className="visually-hidden">Matching lines of {hit.label}</caption>
        <tbody>
          {hit.matches.map((m) => (
            <tr key={m.lineNumber}>
              <th scope="row" className="muted">
                {m.lineNumber}
              </th>
              <td>
                <code>{m.line}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {hit.nextMatchesCursor !== undefined ? (
        <button type="button" disabled={busy} onClick={onMore}>
          More lines of {hit.label}
        </button>
      ) : null}
    </li>
  );
}

/** Full-text search of the DAG definitions or of the documents, line by line. */
export default function Search() {
  const [search, setSearch] = useSearchParams();
  const q = search.get('q') ?? '';
  const scope: Scope = search.get('in') === 'docs' ? 'docs' : 'dags';
  const [text, setText] = useState(q);
  const [results, setResults] = useState<Results | undefined>();
  const [act, busy, error] = useAction();
  useEffect(() => {
    setResults(undefined);
    if (q !== '') void act(async () => setResults(await searchPage(scope, q, undefined)));
  }, [q, scope]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSearch({ q: text.trim(), in: scope });
  };
  const nextPage = (cursor: string) =>
    void act(async () => {
      const more = await searchPage(scope, q, cursor);
      setResults((r) => ({ hits: [...(r?.hits ?? []), ...more.hits], nextCursor: more.nextCursor }));
    });
  const nextLines = (hit: Hit) =>
    void act(async () => {
      if (hit.nextMatchesCursor === undefined) return;
      const more = await moreMatches(scope, hit.key, q, hit.nextMatchesCursor);
      const grown = { ...hit, matches: [...hit.matches, ...more.matches], nextMatchesCursor: more.nextCursor };
      setResults((r) => r && { ...r, hits: r.hits.map((h) => (h.key === hit.key ? grown : h)) });
    });
  return (
    <Page title="Search">
      <form className="filters" role="search" aria-label="Search" onSubmit={submit}>
        <input aria-label="Search text" placeholder="text to find" required maxLength={256} value={text} onChange={(e) => setText(e.target.value)} />
        <select aria-label="Search in" value={scope} onChange={(e) => setSearch({ q, in: e.target.value })}>
          <option value="dags">DAG definitions</option>
          <option value="docs">Documents</option>
        </select>
        <button type="submit" className="primary">
          Search
        </button>
      </form>
      <ErrorNote error={error} />
      {q === '' ? null : results === undefined ? (
        <Loading what="matches" />
      ) : results.hits.length === 0 ? (
        <p className="muted">Nothing matches “{q}”.</p>
      ) : (
        <>
          <ul className="search-hits">
            {results.hits.map((hit) => (
              <HitView key={hit.key} hit={hit} busy={busy} onMore={() => nextLines(hit)} />
            ))}
          </ul>
          {results.nextCursor !== undefined ? (
            <button type="button" disabled={busy} onClick={() => results.nextCursor !== undefined && nextPage(results.nextCursor)}>
              More results
            </button>
          ) : null}
        </>
      )}
    </Page>
  );
}
