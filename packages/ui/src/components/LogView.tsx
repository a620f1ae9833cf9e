import { useEffect, useMemo, useRef, useState } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorNote } from './common';
import { useInterval } from '../lib/use-resource';

const TAIL_LINES = 2000;

export interface LogSource {
  /** Run name (the DAG name) and run id. */
  name: string;
  dagRunId: string;
  /** A step's log, or the run's own when absent. */
  step?: string;
  stream?: 'stdout' | 'stderr';
}

async function fetchTail(source: LogSource): Promise<{ content: string; totalLines: number }> {
  const path = { name: source.name, dagRunId: source.dagRunId };
  const page =
    source.step !== undefined
      ? await unwrap(api.GET('/dag-runs/{name}/{dagRunId}/steps/{stepName}/log', { params: { path: { ...path, stepName: source.step }, query: { tail: TAIL_LINES, stream: source.stream ?? 'stdout' } } }))
      : await unwrap(api.GET('/dag-runs/{name}/{dagRunId}/log', { params: { path, query: { tail: TAIL_LINES } } }));
  return { content: page.content, totalLines: page.totalLines };
}

/** Every line of the log, page by page (the API pages at most 10000 lines), for download. */
async function fetchWhole(source: LogSource): Promise<string> {
  const parts: string[] = [];
  const path = { name: source.name, dagRunId: source.dagRunId };
  for (let offset = 1; ; ) {
    const query = { offset, limit: 10000 };
    const page =
      source.step !== undefined
        ? await unwrap(api.GET('/dag-runs/{name}/{dagRunId}/steps/{stepName}/log', { params: { path: { ...path, stepName: source.step }, query: { ...query, stream: source.stream ?? 'stdout' } } }))
        : await unwrap(api.GET('/dag-runs/{name}/{dagRunId}/log', { params: { path, query } }));
    parts.push(page.content);
    if (!page.hasMore || page.lineCount === 0) return parts.join(page.content.endsWith('\n') ? '' : '\n');
    offset += page.lineCount;
  }
}

/** A live tail of a run's or a step's log: follow mode, search, download. */
export function LogView({ source, live, label }: { source: LogSource; live: boolean; label: string }) {
  const [content, setContent] = useState('');
  const [error, setError] = useState<Error | undefined>();
  const [follow, setFollow] = useState(true);
  const [query, setQuery] = useState('');
  const box = useRef<HTMLPreElement>(null);
  const key = `${source.name}/${source.dagRunId}/${source.step ?? ''}/${source.stream ?? ''}`;
  const load = () =>
    void fetchTail(source).then(
      (page) => {
        setContent(page.content);
        setError(undefined);
      },
      (e: unknown) => setError(e instanceof Error ? e : new Error(String(e))),
    );
  useEffect(() => load(), [key]);
  useInterval(load, 1000, live && follow);
  useEffect(() => {
    if (follow && box.current !== null) box.current.scrollTop = box.current.scrollHeight;
  }, [content, follow]);
  const lines = useMemo(() => {
    const all = content.split('\n');
    const q = query.trim().toLowerCase();
    return q === '' ? all : all.filter((l) => l.toLowerCase().includes(q));
  }, [content, query]);
  const download = () =>
    void fetchWhole(source).then((text) => {
      const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `${source.name}-${source.dagRunId}${source.step !== undefined ? `-${source.step}` : ''}.log`;
      a.click();
      URL.revokeObjectURL(url);
    }, setError);
  return (
    <div className="log">
      <div className="filters">
        <input type="search" aria-label={`Search ${label}`} placeholder="Search the log" value={query} onChange={(e) => setQuery(e.target.value)} />
        <label>
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow
        </label>
        <button type="button" onClick={download}>
          Download
        </button>
        {query !== '' ? <span className="muted small">{lines.length} matching line(s)</span> : null}
      </div>
      <ErrorNote error={error} />
      <pre ref={box} className="log-text" role="log" aria-label={label} tabIndex={0} data-testid="log-text">
        {lines.join('\n')}
      </pre>
    </div>
  );
}
