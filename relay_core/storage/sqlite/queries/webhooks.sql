-- Webhooks: the operator's endpoints and the deliveries of events to them, in the outbox
-- (relay_core/storage/webhooks.py runs these).

-- name: get_webhook
-- One endpoint.
SELECT * FROM webhooks WHERE webhook_id = :webhook_id;

-- name: insert_webhook
-- A new endpoint; its id.
INSERT INTO webhooks
    (url, events, description, enabled, disabled_reason, sealed_secret, sealed_previous,
     previous_until, after_event_id, created_at, updated_at, task_id, a2a_push)
VALUES
    (:url, :events, :description, :enabled, :disabled_reason, :sealed_secret,
     :sealed_previous, :previous_until, :after_event_id, :created_at, :updated_at, :task_id,
     :a2a_push)
RETURNING webhook_id;

-- name: page_webhooks
-- A page of endpoints by id, after :after (NULL: from the first).
SELECT * FROM webhooks
WHERE (:after IS NULL OR webhook_id > :after)
ORDER BY webhook_id LIMIT +:limit;

-- name: every_webhook
-- Every endpoint, by id (the operator keeps a handful).
SELECT * FROM webhooks ORDER BY webhook_id;

-- name: enabled_webhooks
-- The enabled endpoints, by id.
SELECT * FROM webhooks WHERE enabled ORDER BY webhook_id;

-- name: webhooks_by_id
-- The endpoints of :webhook_ids, by id.
SELECT * FROM webhooks
WHERE webhook_id IN (SELECT value FROM json_each(:webhook_ids))
ORDER BY webhook_id;

-- name: replace_webhook
-- An endpoint's URL, events and description replaced.
UPDATE webhooks
SET url = :url, events = :events, description = :description, updated_at = :now
WHERE webhook_id = :webhook_id
RETURNING *;

-- name: disable_webhook
-- An endpoint that takes no deliveries, and why.
UPDATE webhooks SET enabled = FALSE, disabled_reason = :reason, updated_at = :now
WHERE webhook_id = :webhook_id
RETURNING *;

-- name: enable_webhook
-- A disabled endpoint enabled, taking the events after :after_event_id; nothing if it was
-- enabled.
UPDATE webhooks
SET enabled = TRUE, disabled_reason = NULL, after_event_id = :after_event_id,
    updated_at = :now
WHERE webhook_id = :webhook_id AND NOT enabled
RETURNING *;

-- name: rotate_webhook_secret
-- An endpoint's new secret, the one before kept until :previous_until; nothing if its secret
-- is no longer :sealed_previous.
UPDATE webhooks
SET sealed_secret = :sealed_secret, sealed_previous = :sealed_previous,
    previous_until = :previous_until, updated_at = :now
WHERE webhook_id = :webhook_id AND sealed_secret = :sealed_previous
RETURNING *;

-- name: push_webhooks_of_task
-- The enabled endpoints of A2A push-notification configs for a task, by id.
SELECT * FROM webhooks
WHERE task_id = :task_id AND enabled
ORDER BY webhook_id;

-- name: get_webhook_delivery
-- One delivery.
SELECT * FROM outbox WHERE delivery_id = :delivery_id AND webhook_id IS NOT NULL;

-- name: insert_webhook_delivery
-- A new delivery; its id.
INSERT INTO outbox
    (webhook_id, event_id, event_type, message_id, body, attempts, status, last_status_code,
     last_error, next_attempt_at, created_at, traceparent)
VALUES
    (:webhook_id, :event_id, :event_type, :message_id, :body, :attempts, :status,
     :last_status_code, :last_error, :next_attempt_at, :created_at, :traceparent)
RETURNING delivery_id;

-- name: page_webhook_deliveries
-- A page of an endpoint's deliveries, newest first, before :before (NULL: from the newest),
-- in :status (NULL: in any).
SELECT * FROM outbox
WHERE webhook_id = :webhook_id AND (:status IS NULL OR status = :status)
    AND (:before IS NULL OR delivery_id < :before)
ORDER BY delivery_id DESC LIMIT +:limit;

-- name: retry_webhook_delivery
-- A failed delivery pending again, as new (its attempts start over), due at :now; nothing if
-- it was not failed.
UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = :now
WHERE delivery_id = :delivery_id AND status = 'failed'
RETURNING *;

-- name: due_webhook_deliveries
-- Up to :limit deliveries due by :now, by when they fall due then by id (what fan_out added
-- at once, in feed order), but those to the endpoints :left_out. Not "webhook_id IN" the
-- endpoints taking some: the planner would read by endpoint.
SELECT * FROM outbox
WHERE next_attempt_at <= :now AND webhook_id IS NOT NULL AND NOT (webhook_id IN (SELECT value FROM json_each(:left_out)))
ORDER BY next_attempt_at, delivery_id LIMIT +:limit;
