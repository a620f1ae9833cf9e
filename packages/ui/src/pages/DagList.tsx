import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useVirtualizer } from '@tanstack/react-virtual';
import { api, unwrap, type Schemas } from '../api/client';
import { DAG_FIRST_SCREEN, DAG_PAGE_SIZE, loadDagPage, loadRecentRuns } from '../api/loaders';
import { ErrorNote, Loading, Page, StatusDot, Time, useAction } from '../components/common';
import { StartDialog } from '../components/StartDialog';
import { useAuth } from '../lib/auth';
import { useRunEvents } from '../lib/live';
import { runStatusWord } from '../lib/status';
import { absoluteTime, utcOffset } from '../lib/time';
import { useResource } from '../lib/use-resource';

type DagItem = Schemas['DagListItem'];
type RunSummary = Schemas['DagRunSummary'];

const DOTS = 5;
const ROW_HEIGHT = 56;

interface AllDags {
  data: DagItem[] | undefined;
  /** Every DAG the API has, while `data` may still hold only the first screenful. */
  total: number | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
}

/** DAG pages `from` to `to` (1-based, inclusive) of the API's largest size, asked for together. */
async function dagPages(from: number, to: number): Promise<DagItem[]> {
  const answers = await Promise.all(Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => loadDagPage(from + i, DAG_PAGE_SIZE)));
  return answers.flatMap((a) => a.dags);
}

/** Every DAG; `known` is their number when an earlier answer told it. */
async function everyDag(known: number | undefined): Promise<{ dags: DagItem[]; total: number }> {
  if (known !== undefined) return { dags: await dagPages(1, Math.ceil(known / DAG_PAGE_SIZE)), total: known };
  const first = await loadDagPage(1, DAG_PAGE_SIZE);
  return { dags: [...first.dags, ...(await dagPages(2, first.pagination.totalPages))], total: first.pagination.totalRecords };
}

/**
 * Every DAG. A visit first asks for one screenful, a small answer the server builds and the
 * browser parses quickly, and shows it; then every DAG in the API's largest pages. Live
 * updates load every page again.
 */
function useAllDags(): AllDags {
  // The first screenful, when its prefetched answer is already in: the first render shows it.
  const [arrived] = useState(() => loadDagPage.arrived(1, DAG_FIRST_SCREEN));
  const [state, setState] = useState<{ data?: DagItem[]; total?: number; error?: Error; loading: boolean }>(() =>
    arrived !== undefined ? { data: arrived.dags, total: arrived.pagination.totalRecords, loading: arrived.pagination.totalPages > 1 } : { loading: true },
  );
  const generation = useRef(0);
  /** Loads every DAG, first one screenful when `screenFirst`; `known` is their number when told. */
  const load = useCallback((screenFirst: boolean, known?: number) => {
    const mine = ++generation.current;
    const current = () => mine === generation.current;
    const run = async (): Promise<void> => {
      let total = known;
      if (screenFirst) {
        const screen = await loadDagPage(1, DAG_FIRST_SCREEN);
        if (!current()) return;
        total = screen.pagination.totalRecords;
        setState({ data: screen.dags, total, loading: screen.pagination.totalPages > 1 });
        if (screen.pagination.totalPages <= 1) return;
      }
      const all = await everyDag(total);
      if (current()) setState({ data: all.dags, total: all.total, loading: false });
    };
    run().catch((error: unknown) => current() && setState((s) => ({ ...s, loading: false, error: error instanceof Error ? error : new Error(String(error)) })));
  }, []);
  useEffect(() => {
    if (arrived === undefined) load(true);
    else if (arrived.pagination.totalPages > 1) load(false, arrived.pagination.totalRecords);
  }, [load, arrived]);
  const reload = useCallback(() => load(false), [load]);
  return { data: state.data, total: state.total, error: state.error, loading: state.loading, reload };
}

/** The newest runs, grouped by DAG name, newest first: the coloured dots. */
function byDag(body: { dagRuns: RunSummary[] }): Map<string, RunSummary[]> {
  const byName = new Map<string, RunSummary[]>();
  for (const run of body.dagRuns) {
    const list = byName.get(run.name) ?? [];
    if (list.length < DOTS) list.push(run);
    byName.set(run.name, list);
  }
  return byName;
}

const recentRunsByDag = async (): Promise<Map<string, RunSummary[]>> => byDag(await loadRecentRuns());

function arrivedRunsByDag(): Map<string, RunSummary[]> | undefined {
  const body = loadRecentRuns.arrived();
  return body !== undefined ? byDag(body) : undefined;
}

function scheduleText(dag: DagItem['dag']): string {
  return dag.schedule.map((s) => ('expression' in s ? s.expression : `at ${absoluteTime(new Date(s.at))}`)).join(', ');
}

/** A new DAG: its file name, then the editor (the API writes a one-step starter spec). */
function NewDag() {
  const [name, setName] = useState('');
  const [run, busy, error] = useAction();
  const navigate = useNavigate();
  const { can } = useAuth();
  if (!can('write')) return null;
  return (
    <form
      className="filters"
      aria-label="New DAG"
      onSubmit={(e) => {
        e.preventDefault();
        void run(() => unwrap(api.POST('/dags', { body: { name } }))).then((ok) => ok && navigate(`/dags/${encodeURIComponent(name)}?tab=spec`));
      }}
    >
      <input aria-label="New DAG file name" placeholder="new-dag-name" required pattern="[a-zA-Z0-9_-]+" value={name} onChange={(e) => setName(e.target.value)} />
      <button type="submit" disabled={busy}>
        New DAG
      </button>
      {error !== undefined ? <span className="error-text small" role="alert">{error.message}</span> : null}
    </form>
  );
}

function SuspendToggle({ item, onChanged }: { item: DagItem; onChanged: () => void }) {
  const [run, busy, error] = useAction();
  const { can } = useAuth();
  return (
    <label className="toggle" title={error?.message}>
      <input
        type="checkbox"
        checked={!item.suspended}
        disabled={busy || !can('write')}
        onChange={() => void run(() => unwrap(api.POST('/dags/{fileName}/suspend', { params: { path: { fileName: item.fileName } }, body: { suspend: !item.suspended } }))).then(onChanged)}
      />
      <span className="small">{item.suspended ? 'suspended' : 'active'}</span>
      <span className="visually-hidden">schedule of {item.fileName}</span>
    </label>
  );
}

export default function DagList() {
  const dags = useAllDags();
  const runs = useResource(recentRunsByDag, [], arrivedRunsByDag);
  const { can } = useAuth();
  const [query, setQuery] = useState('');
  const [label, setLabel] = useState('');
  const [group, setGroup] = useState('');
  const [status, setStatus] = useState('');
  const [starting, setStarting] = useState<string | undefined>();
  const scroller = useRef<HTMLDivElement>(null);
  useRunEvents('/events/dag-runs', () => {
    dags.reload();
    runs.reload();
  }, { throttleMs: 500 });

  const all = useMemo(() => dags.data ?? [], [dags.data]);
  const labels = useMemo(() => [...new Set(all.flatMap((d) => d.dag.labels))].sort(), [all]);
  const groups = useMemo(() => [...new Set(all.map((d) => d.dag.group).filter((g) => g !== ''))].sort(), [all]);
  const shown = useMemo(() => {
    const q = query.trim().toLowerCase();
    return all.filter(
      (d) =>
        (q === '' || d.fileName.toLowerCase().includes(q) || d.dag.name.toLowerCase().includes(q) || d.dag.description.toLowerCase().includes(q)) &&
        (label === '' || d.dag.labels.includes(label)) &&
        (group === '' || d.dag.group === group) &&
        (status === '' || (status === 'suspended' ? d.suspended : d.latestDAGRun !== undefined && d.latestDAGRun !== null && runStatusWord(d.latestDAGRun.status) === status)),
    );
  }, [all, query, label, group, status]);
  const virtual = useVirtualizer({ count: shown.length, getScrollElement: () => scroller.current, estimateSize: () => ROW_HEIGHT, overscan: 10 });

  return (
    <Page
      title="DAGs"
      actions={
        <>
          <NewDag />
          <span className="muted small">local times, {utcOffset()} now</span>
        </>
      }
    >
      <div className="filters" role="search">
        <input type="search" aria-label="Search DAGs" placeholder="Search name or description" value={query} onChange={(e) => setQuery(e.target.value)} />
        <select aria-label="Filter by label" value={label} onChange={(e) => setLabel(e.target.value)}>
          <option value="">All labels</option>
          {labels.map((l) => (
            <option key={l}>{l}</option>
          ))}
        </select>
        <select aria-label="Filter by group" value={group} onChange={(e) => setGroup(e.target.value)}>
          <option value="">All groups</option>
          {groups.map((g) => (
            <option key={g}>{g}</option>
          ))}
        </select>
        <select aria-label="Filter by status" value={status} onChange={(e) => setStatus(e.target.value)}>
          <option value="">Any status</option>
          <option value="suspended">suspended</option>
          {['running', 'succeeded', 'failed', 'queued', 'waiting', 'aborted'].map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
        <span className="muted small" aria-live="polite">
          {shown.length} of {dags.total ?? all.length}
          {dags.loading && dags.data !== undefined ? ' (loading the rest)' : ''}
        </span>
      </div>
      <ErrorNote error={dags.error ?? runs.error} />
      {dags.loading && dags.data === undefined ? <Loading what="DAGs" /> : null}
      <div className="dag-head" aria-hidden="true">
        <span>Name</span>
        <span>Schedule / next run</span>
        <span>Last runs</span>
        <span>Schedule state</span>
        <span />
      </div>
      <div ref={scroller} className="virtual-scroll" data-testid="dag-list">
        <ul className="virtual-body" style={{ height: virtual.getTotalSize() }} aria-label="DAGs">
          {virtual.getVirtualItems().map((row) => {
            const item = shown[row.index];
            if (item === undefined) return null;
            // The dots come from the newest 500 runs of all DAGs; a DAG whose runs are older shows its latest.
            const recent = runs.data?.get(item.dag.name) ?? (item.latestDAGRun !== null && item.latestDAGRun !== undefined ? [item.latestDAGRun] : []);
            return (
              <li key={item.fileName} className="dag-row" style={{ transform: `translateY(${row.start}px)`, height: ROW_HEIGHT }}>
                <span className="dag-name">
                  <Link to={`/dags/${encodeURIComponent(item.fileName)}`}>{item.fileName}</Link>
                  <span className="muted small">
                    {item.dag.group !== '' ? `${item.dag.group} · ` : ''}
                    {item.dag.labels.join(', ')}
                    {item.errors.length > 0 ? <span className="error-text"> · {item.errors.length} error(s)</span> : null}
                  </span>
                </span>
                <span className="small">
                  {scheduleText(item.dag) || <span className="muted">no schedule</span>}
                  {item.nextRun !== '' ? (
                    <>
                      <br />
                      next <Time value={item.nextRun} />
                    </>
                  ) : null}
                </span>
                <span className="dots">
                  {recent.length === 0 ? <span className="muted small">no runs</span> : null}
                  {recent.map((r) => (
                    <Link key={r.dagRunId} to={`/runs/${encodeURIComponent(r.name)}/${encodeURIComponent(r.dagRunId)}`} aria-label={`run ${r.dagRunId}: ${runStatusWord(r.status)}`}>
                      <StatusDot status={r.status} label={`run ${r.dagRunId}: ${runStatusWord(r.status)}`} />
                    </Link>
                  ))}
                </span>
                <SuspendToggle item={item} onChanged={dags.reload} />
                <span>
                  <button type="button" disabled={!can('run')} onClick={() => setStarting(item.fileName)} aria-label={`Start ${item.fileName}`}>
                    Start
                  </button>
                </span>
              </li>
            );
          })}
        </ul>
      </div>
      {starting !== undefined ? <StartDialog fileName={starting} onClose={() => setStarting(undefined)} /> : null}
    </Page>
  );
}
