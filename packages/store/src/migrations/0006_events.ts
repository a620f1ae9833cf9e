/**
 * The event log. Run lifecycle, worker registration and scheduler leadership events are written
 * by triggers, so each lands in the same transaction as the change it describes, whichever
 * statement made the change.
 */
export const sql = `
CREATE TABLE event_logs (
  id bigserial PRIMARY KEY,
  occurred_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  kind text NOT NULL,
  type text NOT NULL,
  dag_name text NOT NULL DEFAULT '',
  dag_run_id text NOT NULL DEFAULT '',
  attempt_id text NOT NULL DEFAULT '',
  session_id text NOT NULL DEFAULT '',
  user_id text NOT NULL DEFAULT '',
  model text NOT NULL DEFAULT '',
  message text NOT NULL DEFAULT '',
  data jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX event_logs_newest ON event_logs (occurred_at DESC, id DESC);
CREATE INDEX event_logs_by_run ON event_logs (dag_name, dag_run_id);
CREATE INDEX event_logs_by_type ON event_logs (type, occurred_at DESC);

CREATE FUNCTION trellis_run_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.status = OLD.status AND NEW.attempt_id = OLD.attempt_id THEN
    RETURN NEW;
  END IF;
  INSERT INTO event_logs (kind, type, dag_name, dag_run_id, attempt_id, message, data)
  VALUES ('dag_run',
          'dag.run.' || CASE NEW.status WHEN 0 THEN 'created' WHEN 1 THEN 'started' WHEN 2 THEN 'failed' WHEN 3 THEN 'aborted'
                                        WHEN 4 THEN 'succeeded' WHEN 5 THEN 'queued' WHEN 6 THEN 'partially_succeeded'
                                        WHEN 7 THEN 'waiting' WHEN 8 THEN 'rejected' ELSE 'status_' || NEW.status END,
          NEW.dag_name, NEW.dag_run_id, NEW.attempt_id, NEW.error,
          jsonb_build_object('status', NEW.status, 'worker', NEW.worker_id, 'queue', NEW.queue_name, 'trigger', NEW.trigger,
                             'attempt', NEW.attempt_number));
  RETURN NEW;
END $$;
CREATE TRIGGER runs_event AFTER INSERT OR UPDATE OF status, attempt_id ON runs FOR EACH ROW EXECUTE FUNCTION trellis_run_event();

CREATE FUNCTION trellis_worker_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id LIKE 'local:%' THEN
    RETURN NEW;
  END IF;
  INSERT INTO event_logs (kind, type, message, data)
  VALUES ('worker', 'worker.registered', 'worker ' || NEW.id || ' registered',
          jsonb_build_object('workerId', NEW.id, 'labels', NEW.labels, 'hostname', NEW.hostname, 'pollers', NEW.pollers));
  RETURN NEW;
END $$;
CREATE TRIGGER workers_event AFTER INSERT OR UPDATE OF registered_at ON workers FOR EACH ROW EXECUTE FUNCTION trellis_worker_event();

CREATE FUNCTION trellis_leader_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.token = OLD.token THEN
    RETURN NEW;
  END IF;
  INSERT INTO event_logs (kind, type, message, data)
  VALUES ('scheduler', 'scheduler.leader.changed', 'scheduler leadership taken by ' || NEW.holder,
          jsonb_build_object('holder', NEW.holder, 'token', NEW.token));
  RETURN NEW;
END $$;
CREATE TRIGGER scheduler_lease_event AFTER INSERT OR UPDATE OF token ON scheduler_lease FOR EACH ROW EXECUTE FUNCTION trellis_leader_event();
`;
