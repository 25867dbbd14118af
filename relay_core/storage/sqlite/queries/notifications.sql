-- Notifications to the operator (relay_core/storage/notifications.py runs these).

-- name: get_notification
-- One notification.
SELECT * FROM notifications WHERE notification_id = :notification_id;

-- name: insert_notification
-- A new notification; its id.
INSERT INTO notifications
    (agent_id, text, bridge, platform_message_id, status, error, created_at, sent_at,
     traceparent)
VALUES
    (:agent_id, :text, :bridge, :platform_message_id, :status, :error, :created_at, :sent_at,
     :traceparent)
RETURNING notification_id;

-- name: notification_on_platform
-- The notification that names the platform's message itself (sent before posts were kept).
SELECT * FROM notifications
WHERE bridge = :bridge AND platform_message_id = :platform_message_id
LIMIT 1;

-- name: mark_notification_sent
-- A notification sent at :sent_at, as the message :platform_message_id of :bridge.
UPDATE notifications
SET status = 'sent', error = NULL, bridge = :bridge,
    platform_message_id = :platform_message_id, sent_at = :sent_at
WHERE notification_id = :notification_id
RETURNING *;

-- name: mark_notification_failed
-- A notification no platform delivered, and why.
UPDATE notifications SET status = 'failed', error = :error
WHERE notification_id = :notification_id
RETURNING *;

-- name: page_notifications
-- A page of notifications, newest first, before :before (NULL: from the newest), of
-- :agent_id (NULL: of everyone).
SELECT * FROM notifications
WHERE (:agent_id IS NULL OR agent_id = :agent_id)
    AND (:before IS NULL OR notification_id < :before)
ORDER BY notification_id DESC LIMIT +:limit;

-- name: count_notifications
-- How many notifications are in :status, of :agent_id (NULL: of everyone).
SELECT count(*) FROM notifications
WHERE status = :status AND (:agent_id IS NULL OR agent_id = :agent_id);
