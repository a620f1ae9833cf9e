import { Link } from 'react-router';
import type { Schemas } from '../api/client';
import { Gantt } from './Gantt';
import { NodeStatus, Time } from './common';
import { useWindowedRows } from './windowed-rows';
import { runPath } from '../lib/paths';
import { duration, parseTime } from '../lib/time';

type Run = Schemas['DagRunDetails'];

/** The step table's row (badges and one line of text; a long error makes its row taller) and its box's height. */
const NODE_ROW_HEIGHT = 35;
const NODE_VIEW_HEIGHT = 480;

function NodeTable({ run, selected, onSelect }: { run: Run; selected: string | undefined; onSelect: (step: string) => void }) {
  const now = Date.now();
  const rows = useWindowedRows<HTMLDivElement>(run.nodes.length, NODE_ROW_HEIGHT, NODE_VIEW_HEIGHT);
  // Rows not drawn are stood in for by one empty row above and one below, so the box scrolls as if all were there.
  const spacer = (height: number) =>
    height > 0 ? (
      <tr className="spacer" aria-hidden="true" style={{ height }}>
        <td colSpan={8} />
      </tr>
    ) : null;
  return (
    <div ref={rows.scroller} className="table-scroll nodes-scroll" style={{ maxHeight: NODE_VIEW_HEIGHT }}>
      <table className="nodes" aria-rowcount={run.nodes.length + 1}>
        <caption className="visually-hidden">Steps of this run</caption>
        <thead>
          <tr aria-rowindex={1}>
            <th scope="col">Step</th>
            <th scope="col">Status</th>
            <th scope="col">Started</th>
            <th scope="col">Duration</th>
            <th scope="col">Retries</th>
            <th scope="col">Repeats</th>
            <th scope="col">Sub-runs</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {spacer(rows.before)}
          {rows.indexes.map((index) => {
            const n = run.nodes[index] as Schemas['Node'];
            const start = parseTime(n.startedAt)?.getTime();
            const end = parseTime(n.finishedAt)?.getTime() ?? (n.status === 1 ? now : undefined);
            return (
              <tr
                key={n.step.name}
                ref={rows.measure}
                data-index={index}
                aria-rowindex={index + 2}
                aria-selected={selected === n.step.name}
                className={selected === n.step.name ? 'selected' : undefined}
              >
                <th scope="row">
                  <button type="button" className="link" onClick={() => onSelect(n.step.name)} aria-label={`Log of step ${n.step.name}`}>
                    {n.step.name}
                  </button>
                </th>
                <td>
                  <NodeStatus status={n.status} />
                </td>
                <td>
                  <Time value={n.startedAt} />
                </td>
                <td>{start !== undefined && end !== undefined ? duration(end - start) : '—'}</td>
                <td>{n.retryCount}</td>
                <td>{n.doneCount}</td>
                <td>
                  {[...n.subRuns, ...n.subRunsRepeated].map((s) => (
                    <Link key={s.dagRunId} to={runPath(s.name !== '' ? s.name : n.step.run, s.dagRunId)}>
                      {s.dagRunId.slice(0, 8)}
                    </Link>
                  ))}
                </td>
                <td className="error-text small">{n.error}</td>
              </tr>
            );
          })}
          {spacer(rows.after)}
        </tbody>
      </table>
    </div>
  );
}

/** A run's timeline and step table: the run page loads them once its first screen is drawn. */
export default function RunSteps({ run, selected, onSelect }: { run: Run; selected: string | undefined; onSelect: (step: string) => void }) {
  return (
    <>
      <h2>Timeline</h2>
      <Gantt nodes={run.nodes} now={Date.now()} />
      <h2>Steps</h2>
      <NodeTable run={run} selected={selected} onSelect={onSelect} />
    </>
  );
}
