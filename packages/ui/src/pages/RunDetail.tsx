import { lazy, Suspense, useDeferredValue, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { loadRun } from '../api/loaders';
import { ErrorNote, Loading, Page, RunStatus, Time, useAction } from '../components/common';
import { Graph } from '../components/Graph';
import { LogView } from '../components/LogView';
import { useAuth } from '../lib/auth';
import { useRunEvents } from '../lib/live';
import { conditionInWords, isLiveRun } from '../lib/status';
import { runPath } from '../lib/paths';
import { applyNodeEvents } from '../lib/node-events';
import { listsTooFewSteps } from '../lib/unlisted-steps';
import { useResource } from '../lib/use-resource';

type Run = Schemas['DagRunDetails'];

// The timeline and the step table come after the first paint (below): their code (with the
// windowing library) is fetched then, not before the graph can be drawn.
const RunSteps = lazy(() => import('../components/RunSteps'));

/**
 * Approve or reject a step that waits for a decision: its prompt, and one field for each input
 * its `approval` names (required ones must be filled to approve; they become env vars of the
 * steps after it).
 */
function ApprovalForm({ run, node, onDone }: { run: Run; node: Schemas['Node']; onDone: () => void }) {
  const step = node.step.name;
  const approval = node.step.approval ?? { prompt: '', input: [], required: [] };
  const [inputs, setInputs] = useState<Record<string, string>>({});
  const [reason, setReason] = useState('');
  const [act, busy, error] = useAction();
  const path = { name: run.name, dagRunId: run.dagRunId, stepName: step };
  const decide = (verb: 'approve' | 'reject') => (event?: FormEvent) => {
    event?.preventDefault();
    const given = Object.fromEntries(Object.entries(inputs).filter(([, v]) => v !== ''));
    const body = { inputs: given, ...(reason !== '' ? { reason } : {}) };
    void act(() =>
      verb === 'approve'
        ? unwrap(api.POST('/dag-runs/{name}/{dagRunId}/steps/{stepName}/approve', { params: { path }, body }))
        : unwrap(api.POST('/dag-runs/{name}/{dagRunId}/steps/{stepName}/reject', { params: { path }, body })),
    ).then((ok) => ok && onDone());
  };
  const fieldId = (name: string) => `input-${step}-${name}`;
  return (
    <form className="approval" onSubmit={decide('approve')} aria-label={`Decision for ${step}`}>
      <p>
        <strong>{step}</strong> waits for approval{approval.prompt !== '' ? ': ' : '.'}
        {approval.prompt}
      </p>
      {approval.input.map((name) => {
        const required = approval.required.includes(name);
        return (
          <div className="field" key={name}>
            <label htmlFor={fieldId(name)}>
              {name}
              {required ? ' *' : ''}
            </label>
            <input id={fieldId(name)} required={required} value={inputs[name] ?? ''} onChange={(e) => setInputs((s) => ({ ...s, [name]: e.target.value }))} />
          </div>
        );
      })}
      <div className="field">
        <label htmlFor={`reason-${step}`}>Reason</label>
        <input id={`reason-${step}`} value={reason} onChange={(e) => setReason(e.target.value)} />
      </div>
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          Approve
        </button>
        <button type="button" disabled={busy} onClick={decide('reject')}>
          Reject
        </button>
      </div>
      <ErrorNote error={error} />
    </form>
  );
}

/**
 * The file of the stored DAG a run was started from (a DAG's `name` may differ from its file
 * name), while it still holds that DAG; undefined while unknown, for an inline run, or once the
 * DAG is deleted or renamed. One DAG is read, not a list of them searched.
 */
function useDagFile(run: Run | undefined): string | undefined {
  const fileName = run?.fileName;
  const name = run?.name;
  const found = useResource(async () => {
    if (fileName === undefined || fileName === '') return undefined;
    const { data } = await api.GET('/dags/{fileName}', { params: { path: { fileName } } });
    return data?.dag.name === name ? fileName : undefined;
  }, [fileName, name]);
  return found.data;
}

function Outputs({ run }: { run: Run }) {
  const outputs = useResource(() => unwrap(api.GET('/dag-runs/{name}/{dagRunId}/outputs', { params: { path: { name: run.name, dagRunId: run.dagRunId } } })), [run.dagRunId, run.status]);
  if (outputs.error !== undefined) return <ErrorNote error={outputs.error} />;
  const entries = Object.entries(outputs.data?.outputs ?? {});
  if (entries.length === 0) return <p className="muted">No outputs.</p>;
  return (
    <dl className="outputs">
      {entries.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>
            <code>{String(v)}</code>
          </dd>
        </div>
      ))}
    </dl>
  );
}

export default function RunDetail() {
  const { name = '', dagRunId = '' } = useParams();
  const [search, setSearch] = useSearchParams();
  const navigate = useNavigate();
  const { can } = useAuth();
  const [act, busy, actionError] = useAction();
  const detail = useResource(() => loadRun(name, dagRunId), [name, dagRunId], () => loadRun.arrived(name, dagRunId));
  const run = detail.data?.dagRun;
  // Run changes fetch the run again (timing, outputs, handlers); step changes arrive whole and
  // are applied in place, so a moving run costs no request per step.
  useRunEvents(`/events/dag-runs/${encodeURIComponent(name)}/${encodeURIComponent(dagRunId)}?nodes=true`, detail.reload, {
    onNodes: (events) => {
      if (run !== undefined && listsTooFewSteps(run.dagRunId, run.nodes, events)) detail.reload();
      else detail.update((d) => ({ ...d, dagRun: { ...d.dagRun, nodes: applyNodeEvents(d.dagRun.dagRunId, d.dagRun.nodes, events) } }));
    },
    onOpen: detail.reload,
  });
  const step = search.get('step') ?? undefined;
  const [stream, setStream] = useState<'stdout' | 'stderr'>('stdout');
  // The timeline and the step table (hundreds of rows, below the graph) render just after the
  // status and the graph have been shown (on the first render too: null until then), and keep
  // up a frame behind while the run moves.
  const below = useDeferredValue(run ?? null, null);
  const dagFile = useDagFile(run);
  if (run === undefined) return detail.error !== undefined ? <ErrorNote error={detail.error} /> : <Loading what="the run" />;

  const path = { name: run.name, dagRunId: run.dagRunId };
  const live = isLiveRun(run.status);
  const waitingSteps = run.status === 7 ? run.nodes.filter((n) => n.status === 1) : [];
  const steps = run.nodes.map((n) => n.step);
  const actions = (
    <>
      <button type="button" disabled={!can('run') || busy || !(run.status === 1 || run.status === 7 || run.status === 5)} onClick={() => void act(() => unwrap(api.POST('/dag-runs/{name}/{dagRunId}/stop', { params: { path } }))).then(detail.reload)}>
        Stop
      </button>
      <button
        type="button"
        disabled={!can('run') || busy || live}
        onClick={() => void act(async () => unwrap(api.POST('/dag-runs/{name}/{dagRunId}/retry', { params: { path }, body: {} }))).then(detail.reload)}
      >
        Retry
      </button>
      <button
        type="button"
        disabled={!can('run') || busy || live}
        onClick={() =>
          void act(async () => {
            const again = await unwrap(api.POST('/dag-runs/{name}/{dagRunId}/reschedule', { params: { path }, body: {} }));
            void navigate(runPath(run.name, again.dagRunId));
          })
        }
      >
        Reschedule
      </button>
      {run.status === 5 ? (
        <button type="button" disabled={!can('run') || busy} onClick={() => void act(() => unwrap(api.GET('/dag-runs/{name}/{dagRunId}/dequeue', { params: { path } }))).then(detail.reload)}>
          Dequeue
        </button>
      ) : null}
    </>
  );
  return (
    <Page
      title={
        <>
          {dagFile !== undefined ? <Link to={`/dags/${encodeURIComponent(dagFile)}`}>{run.name}</Link> : run.name} / {run.dagRunId}
        </>
      }
      actions={actions}
    >
      <ErrorNote error={actionError ?? detail.error} />
      <dl className="facts">
        <div>
          <dt>Status</dt>
          <dd data-testid="run-status">
            <RunStatus status={run.status} />
          </dd>
        </div>
        <div>
          <dt>Queued</dt>
          <dd>
            <Time value={run.queuedAt} />
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <Time value={run.startedAt} />
          </dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd>
            <Time value={run.finishedAt} />
          </dd>
        </div>
        <div>
          <dt>Triggered by</dt>
          <dd>
            {run.triggeredBy.name !== '' && run.triggeredBy.name !== run.triggeredBy.kind ? `${run.triggeredBy.name} (${run.triggeredBy.kind})` : run.triggeredBy.kind}
          </dd>
        </div>
        <div>
          <dt>Params</dt>
          <dd>
            <code>{run.params || '—'}</code>
          </dd>
        </div>
        {run.parentDAGRunId !== '' ? (
          <div>
            <dt>Parent</dt>
            <dd>
              <Link to={runPath(run.parentDAGRunName, run.parentDAGRunId)}>{run.parentDAGRunName}</Link>
            </dd>
          </div>
        ) : null}
      </dl>
      {run.error !== '' ? <div className="error">{run.error}</div> : null}
      {run.conditions !== undefined && run.conditions.length > 0 ? (
        <section aria-label="Why this run waits" className="conditions">
          <h2>Why it waits</h2>
          <ul>
            {run.conditions.map((c) => (
              <li key={c.reason} data-reason={c.reason}>
                <strong>{conditionInWords(c.reason)}</strong> <span className="muted small">{c.message}</span> <span className="small">(checked <Time value={c.checkedAt} />)</span>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {waitingSteps.map((n) => (can('run') ? <ApprovalForm key={n.step.name} run={run} node={n} onDone={detail.reload} /> : null))}
      <h2>Graph</h2>
      <Graph steps={steps} nodes={run.nodes} onSelect={(s) => setSearch({ step: s })} />
      {below !== null ? (
        <Suspense fallback={<Loading what="the steps" />}>
          <RunSteps run={below} selected={step} onSelect={(s) => setSearch({ step: s })} />
        </Suspense>
      ) : (
        <Loading what="the steps" />
      )}
      <h2>Outputs</h2>
      <Outputs run={run} />
      <h2 id="log-title">{step !== undefined ? `Log of step ${step}` : 'Run log'}</h2>
      <div className="filters">
        {step !== undefined ? (
          <>
            <button type="button" onClick={() => setSearch({})}>
              Show the run log
            </button>
            <select aria-label="Output stream" value={stream} onChange={(e) => setStream(e.target.value as 'stdout' | 'stderr')}>
              <option value="stdout">stdout</option>
              <option value="stderr">stderr</option>
            </select>
          </>
        ) : null}
      </div>
      <LogView
        source={{ name: run.name, dagRunId: run.dagRunId, ...(step !== undefined ? { step, stream } : {}) }}
        live={live || run.nodes.some((n) => n.step.name === step && n.status === 1)}
        label={step !== undefined ? `Log of step ${step}` : 'Run log'}
      />
    </Page>
  );
}
