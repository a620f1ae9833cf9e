import { NodeStatus, nodeStatusLabel } from '@trellis/core';

/**
 * A data-modifying CTE body that ends the steps still Running in runs the coordinator just
 * ended itself (a lost worker or coordinator): they turn Failed, finished now, with the run's
 * error, so no step of an ended run stays Running without a finish time. `ended` names a CTE
 * with the runs' `id` and `error`.
 */
export function endRunningNodes(ended: string): string {
  return `UPDATE run_nodes n SET data = n.data || jsonb_build_object(
       'status', ${NodeStatus.Failed}, 'statusLabel', '${nodeStatusLabel(NodeStatus.Failed)}',
       'finishedAt', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
       'error', CASE WHEN COALESCE(n.data->>'error', '') = '' THEN e.error ELSE n.data->>'error' END)
     FROM ${ended} e WHERE n.run_id = e.id AND n.data->>'status' = '${NodeStatus.Running}'
     RETURNING n.run_id`;
}
