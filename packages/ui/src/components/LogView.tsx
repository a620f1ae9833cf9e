import { useEffect, useMemo, useRef, useState } from 'react';
import { api, unwrap } from '../api/client';
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

/** The log's event stream: its text as it grows, then `end` once the run has ended. */
function streamPath(source: LogSource): string {
  const run = `/events/dag-runs/${encodeURIComponent(source.name)}/${encodeURIComponent(source.dagRunId)}`;
  return source.step !== undefined ? `${run}/steps/${encodeURIComponent(source.step)}/log?stream=${source.stream ?? 'stdout'}` : `${run}/log`;
}

interface LogState {
  text: string;
  error?: Error;
  /** The run's final status once the stream said it ended. */
  ended?: string;
}

const toError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));

/**
 * The log's last lines: its tail on open and, while `follow`, its event stream. The stream sends
 * the log from its start, so the tail stays on screen until the stream has caught up with it
 * (as many lines as the tail counted); from then on the page shows the stream's last lines.
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
    const buffer = new LogBuffer(TAIL_LINES);
    let attempt: string | undefined;
    // Lines the stream must bring before it shows more than the tail (undefined: the tail has not answered).
    let catchUp: number | undefined;
    let streaming = false;
    let ended = false;
    const showStream = () => {
      streaming ||= ended || (catchUp !== undefined && buffer.received >= catchUp);
      if (streaming) show({ text: buffer.text });
    };
    void fetchTail(sourceRef.current).then(
      (page) => {
        catchUp = page.isEstimate ? 0 : page.totalLines;
        if (!streaming) show({ text: page.content, error: undefined });
        showStream();
      },
      (e: unknown) => {
        // The stream alone then: its first text replaces what is shown, not an empty answer.
        catchUp = 0;
        show({ error: toError(e) });
        if (buffer.received > 0) showStream();
      },
    );
    if (!follow) return () => void (gone = true);
    const stop = followLog(streamPath(sourceRef.current), {
      onText: (attemptId, text) => {
        // A retry's log starts from its start: the last attempt's lines are not this one's.
        if (attempt !== undefined && attemptId !== attempt) {
          buffer.clear();
          streaming = true;
        }
        attempt = attemptId;
        buffer.append(text);
        showStream();
        // The stream speaks for the log now: a failed tail read is no longer the news.
        if (streaming) show({ error: undefined });
      },
      onEnd: (statusLabel) => {
        ended = true;
        showStream();
        show({ ended: statusLabel });
      },
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
