-- The outbox: everything Relay tells the outside world after a commit, webhook deliveries
-- (webhooks.sql adds and reads them) and platforms' jobs, sent by one sender
-- (relay_core/storage/outbox.py runs these).

-- name: record_outbox_attempt
-- How an attempt went (a webhook's or a platform's), if the row is as it was handed out
-- (pending, after :attempts_before attempts); how many rows changed.
UPDATE outbox
SET attempts = :attempts, status = :status, last_status_code = :last_status_code,
    last_error = :last_error, next_attempt_at = :next_attempt_at
WHERE delivery_id = :delivery_id AND status = 'pending' AND attempts = :attempts_before;

-- name: finished_outbox
-- The ids of up to :limit rows in :status made before :before, oldest first.
SELECT delivery_id FROM outbox
WHERE status = :status AND created_at < :before
ORDER BY created_at, delivery_id LIMIT +:limit;

-- name: delete_finished_outbox
-- The rows of :delivery_ids that are finished (succeeded or failed) deleted.
DELETE FROM outbox
WHERE delivery_id IN (SELECT value FROM json_each(:delivery_ids))
    AND status IN ('succeeded', 'failed');

-- name: insert_platform_job
-- A platform's work to do after the commit that asked it: :event_type says what (ask, settle,
-- remind, answered, mirror), :body its arguments as JSON.
INSERT INTO outbox
    (bridge, event_id, event_type, message_id, body, attempts, status, next_attempt_at,
     created_at, traceparent)
VALUES
    (:bridge, 0, :event_type, '', :body, 0, 'pending', :now, :now, :traceparent);

-- name: due_platform_jobs
-- Up to :limit platforms' jobs due by :now, by when they fall due then by id (a card asked
-- before it is settled).
SELECT delivery_id, bridge, event_type, body, attempts FROM outbox
WHERE next_attempt_at <= :now AND bridge IS NOT NULL
ORDER BY next_attempt_at, delivery_id LIMIT +:limit;
