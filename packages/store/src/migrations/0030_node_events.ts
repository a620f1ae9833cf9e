/**
 * Step status changes in the event log (kind `dag_node`), written by a trigger like the run
 * events of 0006: each lands in the same transaction as the snapshot that moved the step, so a
 * live stream on any coordinator sees steps move, whichever worker reported them. Only moves
 * are logged: a snapshot rewrites every node, and an unchanged status (or a fresh, not started
 * node) adds nothing. The step definition is left out; a stream needs the status and timing.
 */
export const sql = `
CREATE FUNCTION trellis_node_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_logs (kind, type, dag_name, dag_run_id, attempt_id, message, data)
  SELECT 'dag_node',
         'dag.node.' || COALESCE(NULLIF(NEW.data->>'statusLabel', ''), 'status_' || (NEW.data->>'status')),
         r.dag_name, r.dag_run_id, r.attempt_id, COALESCE(NEW.data->>'error', ''),
         jsonb_build_object('stepName', NEW.step_name, 'nodeKind', NEW.kind, 'position', NEW.position,
                            'status', NEW.data->'status', 'statusLabel', NEW.data->'statusLabel',
                            'startedAt', NEW.data->'startedAt', 'finishedAt', NEW.data->'finishedAt',
                            'retryCount', NEW.data->'retryCount', 'doneCount', NEW.data->'doneCount')
  FROM runs r WHERE r.id = NEW.run_id;
  RETURN NEW;
END $$;
CREATE TRIGGER run_nodes_insert_event AFTER INSERT ON run_nodes FOR EACH ROW
  WHEN (COALESCE(NEW.data->>'status', '0') <> '0') EXECUTE FUNCTION trellis_node_event();
CREATE TRIGGER run_nodes_update_event AFTER UPDATE OF data ON run_nodes FOR EACH ROW
  WHEN (OLD.data->'status' IS DISTINCT FROM NEW.data->'status') EXECUTE FUNCTION trellis_node_event();
`;
