-- Direct messages and room posts (relay_core/storage/messages.py runs these). A statement
-- that answers messages selects their columns, read into the model.

-- name: get_message
-- One message.
SELECT * FROM messages WHERE message_id = :message_id;

-- name: insert_message
-- A new message; its id (a first message's thread_id becomes its id: the table's insert trigger).
INSERT INTO messages (
    from_agent, "to", room_id, subject, text, payload, reply_to, thread_id,
    reply_to_notification, status, created_at, delivered_at, acked_at, delivery_count,
    traceparent
) VALUES (
    :from_agent, :to, :room_id, :subject, :text, :payload, :reply_to, :thread_id,
    :reply_to_notification, :status, :created_at, :delivered_at, :acked_at, :delivery_count,
    :traceparent
)
RETURNING message_id;

-- name: insert_direct_message
-- A new direct message and the event that tells its recipient of it (message.created, its
-- data naming the message), in one statement; the message's id. :feed_ordinal is the event's
-- ordinal among its transaction's (events.sql).
WITH message AS (
    INSERT INTO messages (
        from_agent, "to", room_id, subject, text, payload, reply_to, thread_id,
        reply_to_notification, status, created_at, delivered_at, acked_at, delivery_count,
        traceparent
    ) VALUES (
        :from_agent, :to, :room_id, :subject, :text, :payload, :reply_to, :thread_id,
        :reply_to_notification, :status, :created_at, :delivered_at, :acked_at, :delivery_count,
        :traceparent
    )
    RETURNING message_id
)
INSERT INTO events (event_id, kind, audience, subject_id, data, created_at, traceparent)
SELECT relay_feed_id(:feed_ordinal), 'message.created', :to, message_id::text,
    jsonb_build_object('message_id', message_id, 'from_agent', :from_agent::text, 'to', :to::text),
    :created_at, :traceparent
FROM message
RETURNING subject_id::bigint;

-- name: ack_message
-- Acknowledged by its recipient, if it was not yet.
UPDATE messages SET status = 'acked', acked_at = :now
WHERE message_id = :message_id AND "to" = :agent_id AND status IN ('pending', 'delivered')
RETURNING *;

-- name: deliver_message
-- Delivered (its recipient read it), if it was pending.
UPDATE messages
SET status = 'delivered', delivered_at = :now, delivery_count = delivery_count + 1
WHERE message_id = :message_id AND status = 'pending'
RETURNING *;

-- name: unacked_to
-- An inbox's first unacknowledged messages, up to :limit: each one's id, status and sender.
-- Held until the unit ends, leaving out those another reader holds: readers of one inbox at
-- once take disjoint messages rather than lock the same rows in different orders.
SELECT message_id, status, from_agent FROM messages
WHERE "to" = :agent_id AND status IN ('pending', 'delivered')
ORDER BY message_id LIMIT :limit
FOR UPDATE SKIP LOCKED;

-- name: count_reads
-- The messages :message_ids, unacknowledged to :agent_id, read from its inbox once more.
UPDATE messages SET delivery_count = delivery_count + 1
WHERE message_id = ANY(:message_ids::bigint[]) AND "to" = :agent_id;

-- name: mark_delivered
-- The pending messages :message_ids delivered.
UPDATE messages SET status = 'delivered', delivered_at = :now
WHERE message_id = ANY(:message_ids::bigint[]);

-- name: messages_array
-- The messages :message_ids, by id.
SELECT * FROM messages WHERE message_id = ANY(:message_ids::bigint[]) ORDER BY message_id;

-- name: inbox_array
-- An inbox's first unacknowledged messages, up to :limit.
SELECT * FROM messages
WHERE "to" = :agent_id AND status IN ('pending', 'delivered')
ORDER BY message_id LIMIT :limit;

-- name: room_array
-- A room's newest posts, up to :limit, oldest of them first.
SELECT * FROM (
    SELECT * FROM messages WHERE room_id = :room_id ORDER BY message_id DESC LIMIT :limit
) AS newest
ORDER BY message_id;

-- name: room_thread_array
-- room_array of one conversation, through ix_messages_thread.
SELECT * FROM (
    SELECT * FROM messages WHERE room_id = :room_id AND thread_id = :thread_id
    ORDER BY message_id DESC LIMIT :limit
) AS newest
ORDER BY message_id;

-- name: thread_after
-- A conversation's messages after :after, oldest first, up to :limit.
SELECT * FROM messages
WHERE thread_id = :thread_id AND message_id > :after
ORDER BY message_id LIMIT :limit;

-- name: first_reply_to_notification
-- The first answer to a notification (its answers are one conversation).
SELECT * FROM messages
WHERE reply_to_notification = :notification_id
ORDER BY message_id LIMIT 1;

-- name: count_unacked_to
-- How many direct messages to an agent are unacknowledged.
SELECT count(*) FROM messages WHERE "to" = :agent_id AND status IN ('pending', 'delivered');

-- name: count_unacked_by_recipient
-- How many are unacknowledged, by recipient, of the agents :agent_ids (the ones with any).
SELECT "to", count(*) FROM messages
WHERE "to" = ANY(:agent_ids::text[]) AND status IN ('pending', 'delivered')
GROUP BY "to";

-- name: count_unacked
-- How many direct messages are unacknowledged.
SELECT count(*) FROM messages WHERE "to" IS NOT NULL AND status IN ('pending', 'delivered');

-- name: count_replies_by_notification
-- How many answers each of the notifications :notification_ids got (the ones with any).
SELECT reply_to_notification, count(*) FROM messages
WHERE reply_to_notification = ANY(:notification_ids::bigint[])
GROUP BY reply_to_notification;
