import { useEffect, useMemo, useRef, useState } from 'react';
import { api, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { ErrorNote } from './common';
import { followLog } from '../api/events';
import { LogBuffer } from '../lib/log-buffer';

const TAIL_LINES = 2000;

export interface LogSource {
  /** Run name (the DAG name) and run id. */
  name: string;
  dagRunId: string;
  /** A step's log, or the run's own when absent. */
  step?: string;
  stream?: 'stdout' | 'stderr';
}

async function fetchTail(source: LogSource): Promise<{ content: string; totalLines: number; isEstimate: boolean }> {
  const path = { name: source.name, dagRunId: source.dagRunId };
  const page =
    source.step !== undefined
      ? await unwrap(api.GET('/dag-runs/{name}/{dagRunId}/steps/{stepName}/log', { params: { path: { ...path, stepName: source.step }, query: { tail: TAIL_LINES, stream: source.stream ?? 'stdout' } } }))
      : await unwrap(api.GET('/dag-runs/{name}/{dagRunId}/log', { params: { path, query: { tail: TAIL_LINES } } }));
  return { content: page.content, totalLines: page.totalLines, isEstimate: page.isEstimate };
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

/** A log stream's query, as the API declares it (the step log's has the run log's and `stream`). */
type StreamQuery = NonNullable<operations['streamStepLog']['parameters']['query']>;

/** The log's event stream from its last TAIL_LINES lines: its text as it grows, then `end` once the run has ended. */
function streamPath(source: LogSource): string {
  const run = `/events/dag-runs/${encodeURIComponent(source.name)}/${encodeURIComponent(source.dagRunId)}`;
  const query: StreamQuery = source.step !== undefined ? { stream: source.stream ?? 'stdout', tail: TAIL_LINES } : { tail: TAIL_LINES };
  const search = new URLSearchParams(Object.entries(query).map(([name, value]) => [name, String(value)]));
  return `${source.step !== undefined ? `${run}/steps/${encodeURIComponent(source.step)}/log` : `${run}/log`}?${search.toString()}`;
}

interface LogState {
  text: string;
  error?: Error;
  /** The run's final status once the stream said it ended. */
  ended?: string;
}

const toError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));

/**
 * The log's last lines: while `follow`, from its event stream, which starts with them (its first
 * event, empty for an empty log) and brings each line as it is written; else its tail page.
 */
function useLog(source: LogSource, key: string, follow: boolean): LogState {
  const [state, setState] = useState<LogState>({ text: '' });
  const sourceRef = useRef(source);
  sourceRef.current = source;
  useEffect(() => {
    let gone = false;
    // The text stays until the new one arrives (never a blank log); what was said of the last one goes.
    setState((s) => ({ text: s.text }));
    const show = (change: Partial<LogState>) => !gone && setState((s) => ({ ...s, ...change }));
    if (!follow) {
      void fetchTail(sourceRef.current).then(
        (page) => show({ text: page.content, error: undefined }),
        (e: unknown) => show({ error: toError(e) }),
      );
      return () => void (gone = true);
    }
    const buffer = new LogBuffer(TAIL_LINES);
    let attempt: string | undefined;
    const stop = followLog(streamPath(sourceRef.current), {
      onText: (attemptId, text) => {
        // A retry's log starts from its start: the last attempt's lines are not this one's.
        if (attempt !== undefined && attemptId !== attempt) buffer.clear();
        attempt = attemptId;
        buffer.append(text);
        show({ text: buffer.text, error: undefined });
      },
      onEnd: (statusLabel) => show({ ended: statusLabel }),
      onError: (error) => show({ error }),
    });
    return () => {
      gone = true;
      stop();
    };
  }, [key, follow]);
  return state;
}

/** A live tail of a run's or a step's log: follow mode (over the log's event stream), search, download. */
export function LogView({ source, live, label }: { source: LogSource; live: boolean; label: string }) {
  const [follow, setFollow] = useState(true);
  const [query, setQuery] = useState('');
  const [downloadError, setDownloadError] = useState<Error | undefined>();
  const box = useRef<HTMLPreElement>(null);
  const key = `${source.name}/${source.dagRunId}/${source.step ?? ''}/${source.stream ?? ''}`;
  const { text: content, error, ended } = useLog(source, key, live && follow);
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
    }, (e: unknown) => setDownloadError(toError(e)));
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
        {ended !== undefined ? <span className="muted small">The run ended ({ended}): the log is complete.</span> : null}
      </div>
      <ErrorNote error={error ?? downloadError} />
      <pre ref={box} className="log-text" role="log" aria-label={label} tabIndex={0} data-testid="log-text">
        {lines.join('\n')}
      </pre>
    </div>
  );
}
