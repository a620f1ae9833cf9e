import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { ErrorNote, Loading, Page, RunStatus, Time } from '../components/common';
import { useRunEvents } from '../lib/live';
import { RUN_STATUSES } from '../lib/status';
import { duration, parseTime } from '../lib/time';
import { useResource } from '../lib/use-resource';

const LIMIT = 50;

/** A local `datetime-local` value as the API's Unix seconds. */
const toUnix = (value: string): number | undefined => (value === '' ? undefined : Math.floor(new Date(value).getTime() / 1000));

export default function Runs() {
  const [params, setParams] = useSearchParams();
  const filters = { name: params.get('name') ?? '', status: params.get('status') ?? '', from: params.get('from') ?? '', to: params.get('to') ?? '', labels: params.get('labels') ?? '' };
  // Forward-only cursors: the trail of the pages before this one, for "newer".
  const [trail, setTrail] = useState<string[]>([]);
  const cursor = params.get('cursor') ?? undefined;
  const runs = useResource(() => {
    const from = toUnix(filters.from);
    const to = toUnix(filters.to);
    const query = {
      limit: LIMIT,
      ...(filters.name !== '' ? { name: filters.name } : {}),
      ...(filters.status !== '' ? { status: Number(filters.status) } : {}),
      ...(from !== undefined ? { fromDate: from } : {}),
      ...(to !== undefined ? { toDate: to } : {}),
      ...(filters.labels !== '' ? { labels: filters.labels } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    };
    return unwrap(api.GET('/dag-runs', { params: { query } }));
  }, [params.toString()]);
  // Only the first page moves live; a later page stays put while the operator reads it.
  useRunEvents('/events/dag-runs', () => cursor === undefined && runs.reload(), { throttleMs: 500 });
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value === '') next.delete(key);
    else next.set(key, value);
    next.delete('cursor');
    setTrail([]);
    setParams(next);
  };
  const page = (next: string | undefined) => {
    const p = new URLSearchParams(params);
    if (next === undefined) p.delete('cursor');
    else p.set('cursor', next);
    setParams(p);
  };
  return (
    <Page title="Runs">
      <div className="filters" role="search">
        <input aria-label="DAG name" placeholder="DAG name" value={filters.name} onChange={(e) => set('name', e.target.value)} />
        <select aria-label="Status" value={filters.status} onChange={(e) => set('status', e.target.value)}>
          <option value="">Any status</option>
          {RUN_STATUSES.map((s) => (
            <option key={s.value} value={s.value}>
              {s.word}
            </option>
          ))}
        </select>
        <label>
          From <input type="datetime-local" value={filters.from} onChange={(e) => set('from', e.target.value)} />
        </label>
        <label>
          To <input type="datetime-local" value={filters.to} onChange={(e) => set('to', e.target.value)} />
        </label>
        <input aria-label="Labels" placeholder="labels (a,b=c)" value={filters.labels} onChange={(e) => set('labels', e.target.value)} />
      </div>
      <ErrorNote error={runs.error} />
      {runs.data === undefined ? (
        runs.loading ? <Loading what="runs" /> : null
      ) : (
        <>
          <table className="runs">
            <caption className="visually-hidden">Runs, newest first</caption>
            <thead>
              <tr>
                <th scope="col">DAG</th>
                <th scope="col">Run</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
                <th scope="col">Duration</th>
                <th scope="col">Triggered by</th>
              </tr>
            </thead>
            <tbody>
              {runs.data.dagRuns.map((r: Schemas['DagRunSummary']) => {
                const start = parseTime(r.startedAt)?.getTime();
                const end = parseTime(r.finishedAt)?.getTime();
                return (
                  <tr key={r.dagRunId}>
                    <td>
                      <Link to={`/dags/${encodeURIComponent(r.name)}`}>{r.name}</Link>
                    </td>
                    <td>
                      <Link to={`/runs/${encodeURIComponent(r.name)}/${encodeURIComponent(r.dagRunId)}`}>{r.dagRunId}</Link>
                    </td>
                    <td>
                      <RunStatus status={r.status} />
                    </td>
                    <td>
                      <Time value={r.startedAt !== '' ? r.startedAt : r.queuedAt} />
                    </td>
                    <td>{start !== undefined && end !== undefined ? duration(end - start) : '—'}</td>
                    <td>{r.triggeredBy.name || r.triggeredBy.kind}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {runs.data.dagRuns.length === 0 ? <p className="muted">No runs match.</p> : null}
          <div className="actions">
            <button
              type="button"
              disabled={cursor === undefined}
              onClick={() => {
                const previous = trail.at(-1);
                setTrail(trail.slice(0, -1));
                page(previous === '' ? undefined : previous);
              }}
            >
              Newer
            </button>
            <button
              type="button"
              disabled={runs.data.nextCursor === undefined}
              onClick={() => {
                setTrail([...trail, cursor ?? '']);
                page(runs.data?.nextCursor);
              }}
            >
              Older
            </button>
          </div>
        </>
      )}
    </Page>
  );
}
