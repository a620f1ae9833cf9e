import { lazy, Suspense, useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { loadDag } from '../api/loaders';
import { ErrorNote, Loading, Page, RunStatus, StatusDot, Time, useAction } from '../components/common';
import { Graph } from '../components/Graph';
import { StartDialog } from '../components/StartDialog';
import { useAuth } from '../lib/auth';
import { useRunEvents } from '../lib/live';
import { nodeStatusWord, toneOf } from '../lib/status';
import { applyNodeEvents } from '../lib/node-events';
import { listsTooFewSteps } from '../lib/unlisted-steps';
import { useResource } from '../lib/use-resource';

import type { Problem } from '../components/SpecEditor';

const SpecEditor = lazy(() => import('../components/SpecEditor'));

type Tab = 'graph' | 'spec' | 'history';

function runLink(run: Schemas['DagRunSummary']): string {
  return `/runs/${encodeURIComponent(run.name)}/${encodeURIComponent(run.dagRunId)}`;
}

function SpecTab({ fileName, onSaved }: { fileName: string; onSaved: () => void }) {
  const spec = useResource(() => unwrap(api.GET('/dags/{fileName}/spec', { params: { path: { fileName } } })), [fileName]);
  const [text, setText] = useState<string | undefined>();
  const [problems, setProblems] = useState<Problem[]>([]);
  const [saved, setSaved] = useState<string[] | undefined>();
  const [run, busy, error] = useAction();
  const { can } = useAuth();
  if (spec.data === undefined) return spec.error !== undefined ? <ErrorNote error={spec.error} /> : <Loading what="the specification" />;
  const save = () =>
    void run(async () => {
      const result = await unwrap(api.PUT('/dags/{fileName}/spec', { params: { path: { fileName } }, body: { spec: text ?? spec.data?.spec ?? '' } }));
      setSaved(result.errors);
      onSaved();
    });
  return (
    <div>
      <Suspense fallback={<Loading what="the editor" />}>
        <SpecEditor value={spec.data.spec} name={fileName} onChange={setText} onValidated={setProblems} />
      </Suspense>
      <div className="actions">
        <span role="status" className={problems.length > 0 ? 'error-text' : 'muted'} data-testid="validation">
          {problems.length > 0 ? `${problems.length} problem(s): ${problems.map((p) => `line ${p.line}: ${p.message}`).join('; ')}` : 'valid'}
        </span>
        <button type="button" className="primary" disabled={busy || !can('write') || problems.length > 0} onClick={save} title={can('write') ? undefined : 'Your role may not edit DAGs'}>
          Save
        </button>
      </div>
      <ErrorNote error={error} />
      {saved !== undefined ? <p role="status">{saved.length === 0 ? 'Saved.' : `Saved with problems: ${saved.join('; ')}`}</p> : null}
    </div>
  );
}

/** Runs x steps, as Airflow's grid: one column per run (newest left), one row per step. */
function HistoryGrid({ runs, grid }: { runs: Schemas['DagRunSummary'][]; grid: Array<{ name: string; history: number[] }> }) {
  if (runs.length === 0) return <p className="muted">No runs yet.</p>;
  return (
    <div className="grid-scroll">
      <table className="history">
        <caption className="visually-hidden">Step status by run</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            {runs.map((r) => (
              <th scope="col" key={r.dagRunId}>
                <Link to={runLink(r)} aria-label={`run ${r.dagRunId}`}>
                  <StatusDot status={r.status} label={`run ${r.dagRunId}`} />
                </Link>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {grid.map((row) => (
            <tr key={row.name}>
              <th scope="row">{row.name}</th>
              {runs.map((r, i) => {
                const status = row.history[i];
                const word = status !== undefined ? nodeStatusWord(status) : 'not started';
                return (
                  <td key={r.dagRunId}>
                    <span className={`cell tone-${toneOf(word)}`} title={`${row.name}: ${word}`} role="img" aria-label={word} />
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export default function DagDetail() {
  const { fileName = '' } = useParams();
  const [search, setSearch] = useSearchParams();
  const tab = (search.get('tab') ?? 'graph') as Tab;
  const navigate = useNavigate();
  const { can } = useAuth();
  const [starting, setStarting] = useState(false);
  const [run, busy, actionError] = useAction();
  const detail = useResource(() => loadDag(fileName), [fileName]);
  const history = useResource(() => unwrap(api.GET('/dags/{fileName}/dag-runs', { params: { path: { fileName } } })), [fileName]);
  const latest = detail.data?.latestDAGRun;
  const latestRun = useResource(
    () => (latest?.dagRunId !== undefined ? unwrap(api.GET('/dag-runs/{name}/{dagRunId}', { params: { path: { name: latest.name, dagRunId: latest.dagRunId } } })) : Promise.resolve(undefined)),
    [latest?.dagRunId, latest?.status],
  );
  const dag = detail.data?.dag;
  const refresh = () => {
    detail.reload();
    history.reload();
    latestRun.reload();
  };
  // The latest run's steps move in the graph from the stream's step changes, without a fetch.
  useRunEvents(`/events/dag-runs?name=${encodeURIComponent(dag?.name ?? fileName)}&nodes=true`, refresh, {
    onNodes: (events) => {
      const shown = latestRun.data?.dagRun;
      if (shown !== undefined && listsTooFewSteps(shown.dagRunId, shown.nodes, events)) latestRun.reload();
      else latestRun.update((d) => (d !== undefined ? { ...d, dagRun: { ...d.dagRun, nodes: applyNodeEvents(d.dagRun.dagRunId, d.dagRun.nodes, events) } } : d));
    },
    onOpen: refresh,
  });

  const tabs: Array<[Tab, string]> = [
    ['graph', 'Graph'],
    ['spec', 'Specification'],
    ['history', 'History'],
  ];
  const full = dag !== undefined && 'steps' in dag ? dag : undefined;
  return (
    <Page
      title={fileName}
      actions={
        <>
          <button type="button" className="primary" disabled={!can('run')} onClick={() => setStarting(true)}>
            Start…
          </button>
          <button
            type="button"
            disabled={!can('write') || busy}
            onClick={() => {
              if (window.confirm(`Delete DAG ${fileName}?`)) void run(() => unwrap(api.DELETE('/dags/{fileName}', { params: { path: { fileName } } }))).then((ok) => ok && navigate('/'));
            }}
          >
            Delete
          </button>
        </>
      }
    >
      <ErrorNote error={detail.error ?? actionError} />
      {dag !== undefined ? (
        <p className="muted">
          {dag.description} {dag.schedule.length > 0 ? `· schedule ${dag.schedule.map((s) => ('expression' in s ? s.expression : s.at)).join(', ')}` : ''}{' '}
          {detail.data?.suspended === true ? '· suspended' : ''}
        </p>
      ) : null}
      {(detail.data?.errors.length ?? 0) > 0 ? <div className="error">{detail.data?.errors.join('; ')}</div> : null}
      <div role="tablist" aria-label="DAG views" className="tabs">
        {tabs.map(([id, label], i) => (
          <button
            key={id}
            type="button"
            role="tab"
            aria-selected={tab === id}
            tabIndex={tab === id ? 0 : -1}
            onClick={() => setSearch({ tab: id })}
            onKeyDown={(e) => {
              // The tabs pattern: arrow keys move between tabs, Tab leaves the list.
              const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
              if (step === 0) return;
              const next = (i + step + tabs.length) % tabs.length;
              setSearch({ tab: tabs[next]?.[0] ?? 'graph' });
              (e.currentTarget.parentElement?.children[next] as HTMLElement | undefined)?.focus();
            }}
          >
            {label}
          </button>
        ))}
      </div>
      <div role="tabpanel" aria-label={tabs.find(([id]) => id === tab)?.[1]}>
        {tab === 'graph' ? (
          <>
            {latest !== undefined && latest !== null ? (
              <p>
                Latest run <Link to={runLink(latest)}>{latest.dagRunId}</Link> <RunStatus status={latestRun.data?.dagRun.status ?? latest.status} /> started <Time value={latest.startedAt} />
              </p>
            ) : (
              <p className="muted">Not run yet.</p>
            )}
            {full !== undefined ? (
              <Graph
                steps={full.steps}
                {...(latestRun.data !== undefined ? { nodes: latestRun.data.dagRun.nodes } : {})}
                {...(latest !== undefined && latest !== null ? { onSelect: (step: string) => void navigate(`${runLink(latest)}?step=${encodeURIComponent(step)}`) } : {})}
              />
            ) : detail.loading ? (
              <Loading what="the graph" />
            ) : null}
          </>
        ) : null}
        {tab === 'spec' ? <SpecTab fileName={fileName} onSaved={refresh} /> : null}
        {tab === 'history' ? (
          <>
            <ErrorNote error={history.error} />
            {history.data !== undefined ? <HistoryGrid runs={history.data.dagRuns} grid={history.data.gridData} /> : <Loading what="run history" />}
          </>
        ) : null}
      </div>
      {starting ? <StartDialog fileName={fileName} onClose={() => setStarting(false)} /> : null}
    </Page>
  );
}
