import { useState } from 'react';
import { Link } from 'react-router';
import { api, unwrap, type Schemas } from '../api/client';
import { ErrorNote, Loading, Page, Time, useAction } from '../components/common';
import { useAuth } from '../lib/auth';
import { useRunEvents } from '../lib/live';
import { absoluteTime, parseTime, relativeTime } from '../lib/time';
import { useInterval, useResource } from '../lib/use-resource';

const HEALTH: Record<Schemas['Worker']['health_status'], [string, string]> = {
  WORKER_HEALTH_STATUS_HEALTHY: ['healthy', 'ok'],
  WORKER_HEALTH_STATUS_WARNING: ['warning', 'waiting'],
  WORKER_HEALTH_STATUS_UNHEALTHY: ['unhealthy', 'failed'],
};

/** The oldest queued run of a queue: how long the head of the line has waited. */
function OldestWait({ queue }: { queue: string }) {
  const items = useResource(() => unwrap(api.GET('/queues/{name}/items', { params: { path: { name: queue }, query: { type: 'queued', perPage: 1000 } } })), [queue]);
  const oldest = (items.data?.items ?? []).map((i) => parseTime(i.queuedAt)).filter((d): d is Date => d !== undefined).sort((a, b) => a.getTime() - b.getTime())[0];
  return oldest !== undefined ? <span title={absoluteTime(oldest)}>{relativeTime(oldest)}</span> : <span className="muted">—</span>;
}

function SchedulerPause() {
  const { can } = useAuth();
  const pause = useResource(() => unwrap(api.GET('/services/scheduler/pause')), []);
  const [reason, setReason] = useState('');
  const [act, busy, error] = useAction();
  if (pause.data === undefined) return <ErrorNote error={pause.error} />;
  const set = (paused: boolean) => void act(() => unwrap(api.POST('/services/scheduler/pause', { body: { paused, ...(paused && reason !== '' ? { reason } : {}) } }))).then(pause.reload);
  return (
    <section aria-labelledby="scheduler-title" className="card">
      <h2 id="scheduler-title">Scheduler</h2>
      {pause.data.paused ? (
        <p>
          <strong>Paused</strong> by {pause.data.pausedBy ?? 'someone'} <Time value={pause.data.pausedAt} />
          {pause.data.reason !== undefined ? `: ${pause.data.reason}` : ''}
        </p>
      ) : (
        <p>Running: schedules start runs.</p>
      )}
      {pause.data.paused ? (
        <button type="button" disabled={!can('admin') || busy} onClick={() => set(false)}>
          Resume
        </button>
      ) : (
        <div className="filters">
          <input aria-label="Reason for pausing" placeholder="Reason (optional)" maxLength={512} value={reason} onChange={(e) => setReason(e.target.value)} disabled={!can('admin')} />
          <button type="button" disabled={!can('admin') || busy} onClick={() => set(true)}>
            Pause
          </button>
        </div>
      )}
      <ErrorNote error={error} />
    </section>
  );
}

export default function Queues() {
  const queues = useResource(() => unwrap(api.GET('/queues')), []);
  const workers = useResource(() => unwrap(api.GET('/workers')), []);
  useRunEvents('/events/dag-runs', queues.reload, { throttleMs: 500 });
  // Worker health comes from heartbeat age, which moves without events.
  useInterval(workers.reload, 2000, true);
  return (
    <Page title="Queues and workers">
      <SchedulerPause />
      <h2>Queues</h2>
      <ErrorNote error={queues.error} />
      {queues.data === undefined ? (
        <Loading what="queues" />
      ) : (
        <table>
          <caption className="visually-hidden">Queues</caption>
          <thead>
            <tr>
              <th scope="col">Queue</th>
              <th scope="col">Type</th>
              <th scope="col">Running</th>
              <th scope="col">Queued</th>
              <th scope="col">Limit</th>
              <th scope="col">Oldest wait</th>
            </tr>
          </thead>
          <tbody>
            {queues.data.queues.map((q) => (
              <tr key={q.name}>
                <th scope="row">{q.name}</th>
                <td>{q.type}</td>
                <td>
                  {q.runningCount}{' '}
                  {q.running.map((r) => (
                    <Link key={r.dagRunId} className="small" to={`/runs/${encodeURIComponent(r.name)}/${encodeURIComponent(r.dagRunId)}`}>
                      {r.dagRunId.slice(0, 8)}{' '}
                    </Link>
                  ))}
                </td>
                <td>{q.queuedCount}</td>
                <td>{q.maxConcurrency ?? '—'}</td>
                <td>{q.queuedCount > 0 ? <OldestWait queue={q.name} /> : <span className="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {queues.data !== undefined && queues.data.queues.length === 0 ? <p className="muted">No queue holds runs.</p> : null}
      <h2>Workers</h2>
      <ErrorNote error={workers.error} />
      {workers.data === undefined ? (
        <Loading what="workers" />
      ) : (
        <table data-testid="workers">
          <caption className="visually-hidden">Workers</caption>
          <thead>
            <tr>
              <th scope="col">Worker</th>
              <th scope="col">Health</th>
              <th scope="col">Last heartbeat</th>
              <th scope="col">Labels</th>
              <th scope="col">Pollers busy</th>
              <th scope="col">Running</th>
            </tr>
          </thead>
          <tbody>
            {workers.data.workers.map((w) => {
              const [word, tone] = HEALTH[w.health_status];
              return (
                <tr key={w.id}>
                  <th scope="row">
                    {w.id} <span className="muted small">{w.hostname}</span>
                  </th>
                  <td>
                    <span className={`badge tone-${tone}`}>{word}</span>
                  </td>
                  <td>
                    <Time value={w.last_heartbeat} />
                  </td>
                  <td>
                    {Object.entries(w.labels).map(([k, v]) => (
                      <span key={k} className="chip">
                        {k}={v}
                      </span>
                    ))}
                  </td>
                  <td>
                    {w.pollers.busy}/{w.pollers.total}
                  </td>
                  <td>
                    {w.running_tasks.map((t) => (
                      <Link key={t.dagRunId} to={`/runs/${encodeURIComponent(t.dagName)}/${encodeURIComponent(t.dagRunId)}`}>
                        {t.dagName}{' '}
                      </Link>
                    ))}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </Page>
  );
}
