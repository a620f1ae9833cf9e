/**
 * Admission in one round trip. The steps are those admitQueuedRuns took as separate statements
 * in a transaction (BEGIN, lock, count, claim, COMMIT): lock the queues holding runs for the
 * target, in name order so that two admitting coordinators cannot deadlock; count their
 * running runs; claim the oldest queued runs that fit with FOR UPDATE SKIP LOCKED. In a
 * plpgsql function each statement takes a fresh snapshot, so the count sees every admission
 * committed before the locks were granted, as separate statements did.
 *
 * Slots: the limit named in p_limits, else unlimited for sub-run queues (`…/sub`), else
 * p_default_limit. This is the rule of the coordinator's QueueLimits, which fills p_limits.
 */
export const sql = `
CREATE FUNCTION trellis_admit(p_remote boolean, p_labels jsonb, p_limits jsonb, p_default_limit integer, p_batch integer, p_worker text)
RETURNS SETOF runs LANGUAGE plpgsql AS $$
DECLARE
  v_locked text[];
  v_queues text[];
  v_slots integer[];
BEGIN
  SELECT coalesce(array_agg(queue ORDER BY queue), '{}') INTO v_locked FROM (
    SELECT queue, pg_advisory_xact_lock(hashtext('trellis.queue.' || queue)) IS NULL AS locked
    FROM (SELECT DISTINCT queue_name AS queue FROM runs
          WHERE status = 5 AND CASE WHEN p_remote THEN dispatch_target = 'remote' AND worker_selector <@ p_labels
                                    ELSE dispatch_target = 'local' END) AS waiting
    ORDER BY queue) AS l;
  IF cardinality(v_locked) = 0 THEN
    RETURN;
  END IF;
  SELECT coalesce(array_agg(queue), '{}'), coalesce(array_agg(slots), '{}') INTO v_queues, v_slots FROM (
    SELECT l.queue, least(p_batch, coalesce((p_limits ->> l.queue)::integer,
                                            CASE WHEN l.queue LIKE '%/sub' THEN p_batch ELSE p_default_limit END)
                                   - coalesce(r.n, 0)) AS slots
    FROM unnest(v_locked) AS l(queue)
    LEFT JOIN (SELECT queue_name, count(*)::integer AS n FROM runs WHERE status IN (1, 7) AND queue_name = ANY(v_locked) GROUP BY queue_name) AS r
      ON r.queue_name = l.queue) AS f
  WHERE slots > 0;
  IF cardinality(v_queues) = 0 THEN
    RETURN;
  END IF;
  RETURN QUERY WITH moved AS (
    UPDATE runs SET status = 1, started_at = now(), worker_id = p_worker, updated_at = now(), dispatched_at = now(),
      acked_at = CASE WHEN dispatch_target = 'local' THEN now() END
    WHERE id IN (
      SELECT id FROM runs WHERE id IN (
        SELECT s.id FROM (
          SELECT id, queue_name, row_number() OVER (PARTITION BY queue_name ORDER BY created_at, id) AS rn
          FROM runs WHERE status = 5 AND queue_name = ANY(v_queues)
            AND CASE WHEN p_remote THEN dispatch_target = 'remote' AND worker_selector <@ p_labels ELSE dispatch_target = 'local' END
        ) AS s JOIN unnest(v_queues, v_slots) AS f(queue, slots) ON f.queue = s.queue_name WHERE s.rn <= f.slots)
      ORDER BY created_at, id LIMIT p_batch FOR UPDATE SKIP LOCKED)
    AND status = 5 RETURNING *)
  SELECT * FROM moved;
END $$;
`;
