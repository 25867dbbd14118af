-- Direct messages and room posts (relay_core/storage/messages.py runs these). A statement
-- that answers messages selects each one's JSON from the view messages_encoded (revision
-- 0028): byte for byte what model_dump_json writes, so a page is answered as SQLite wrote it.
-- An UPDATE's RETURNING writes it itself (a RETURNING reads only its own table), to be read
-- into the model. A list of ids or names is one parameter, a JSON array read by json_each.
--
-- A page is one row, its count and its messages as one JSON array: a row a step costs the
-- sqlite3 module a tuple, its values and a turn of the GIL. Its rows keep a LIMIT (-1: none)
-- so that their ORDER BY holds (SQLite may drop a FROM subquery's ORDER BY, or fold the
-- subquery into the outer query, unless it has one), and group_concat joins them in that
-- order; a room's newest are put back in order by the query around them, which SQLite folds
-- into the count (a LIMIT there as well copies each row's JSON once more: 25% more
-- instructions for a page of 100). A limit is bound as "+:limit": the SQLite of pysqlite3
-- reads a bare "LIMIT ?" as it plans, so binding it again would prepare the statement again
-- (docs/performance.md).

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
-- dialect: PostgreSQL locks the rows it hands out (FOR UPDATE SKIP LOCKED: several instances);
-- SQLite's one writer already does
SELECT message_id, status, from_agent FROM messages
WHERE "to" = :agent_id AND status IN ('pending', 'delivered')
ORDER BY message_id LIMIT +:limit;

-- name: count_reads
-- The messages :message_ids (ascending), unacknowledged to :agent_id, read from its inbox once
-- more. The unit that read them holds the one writer, so they are all of the agent's
-- unacknowledged messages from the first to the last: a range of ix_messages_inbox, 22% fewer
-- instructions than finding each id (docs/performance.md, "Figures behind the code").
-- dialect: SQLite bounds the ids by their range, read as one index range; PostgreSQL matches
-- them with ANY
UPDATE messages SET delivery_count = delivery_count + 1
WHERE "to" = :agent_id AND status IN ('pending', 'delivered')
    AND message_id BETWEEN json_extract(:message_ids, '$[0]')
    AND json_extract(:message_ids, '$[#-1]');

-- name: mark_delivered
-- The pending messages :message_ids delivered. A statement of its own: one that set the
-- status of every message read, even to what it was, would write each one's entry of
-- ix_messages_inbox again.
UPDATE messages SET status = 'delivered', delivered_at = :now
WHERE message_id IN (SELECT value FROM json_each(:message_ids));

-- name: messages_array
-- The messages :message_ids, by id, as one array.
-- dialect: a page built as one JSON array here, answered as SQLite wrote it (the hot lists);
-- PostgreSQL answers rows
SELECT count(*), '[' || coalesce(group_concat(encoded, ','), '') || ']'
FROM (
    SELECT encoded FROM messages_encoded
    WHERE message_id IN (SELECT value FROM json_each(:message_ids))
    ORDER BY message_id LIMIT -1
);

-- name: inbox_array
-- An inbox's first unacknowledged messages, up to :limit, as one array.
-- dialect: a page built as one JSON array here, answered as SQLite wrote it (the hot lists);
-- PostgreSQL answers rows
SELECT count(*), '[' || coalesce(group_concat(encoded, ','), '') || ']'
FROM (
    SELECT encoded FROM messages_encoded
    WHERE "to" = :agent_id AND status IN ('pending', 'delivered')
    ORDER BY message_id LIMIT +:limit
);

-- name: room_array
-- A room's newest posts, up to :limit, oldest of them first, as one array.
-- dialect: a page built as one JSON array here, answered as SQLite wrote it (the hot lists);
-- PostgreSQL answers rows
SELECT count(*), '[' || coalesce(group_concat(encoded, ','), '') || ']'
FROM (
    SELECT encoded FROM (
        SELECT message_id, encoded FROM messages_encoded WHERE room_id = :room_id
        ORDER BY message_id DESC LIMIT +:limit
    )
    ORDER BY message_id
);

-- name: room_thread_array
-- room_array of one conversation, through ix_messages_thread.
-- dialect: a page built as one JSON array here, answered as SQLite wrote it (the hot lists);
-- PostgreSQL answers rows
SELECT count(*), '[' || coalesce(group_concat(encoded, ','), '') || ']'
FROM (
    SELECT encoded FROM (
        SELECT message_id, encoded FROM messages_encoded
        WHERE room_id = :room_id AND thread_id = :thread_id
        ORDER BY message_id DESC LIMIT +:limit
    )
    ORDER BY message_id
);

-- name: thread_after
-- A conversation's messages after :after, oldest first, up to :limit.
SELECT * FROM messages
WHERE thread_id = :thread_id AND message_id > :after
ORDER BY message_id LIMIT +:limit;

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
WHERE "to" IN (SELECT value FROM json_each(:agent_ids)) AND status IN ('pending', 'delivered')
GROUP BY "to";

-- name: count_unacked
-- How many direct messages are unacknowledged.
SELECT count(*) FROM messages WHERE "to" IS NOT NULL AND status IN ('pending', 'delivered');

-- name: count_replies_by_notification
-- How many answers each of the notifications :notification_ids got (the ones with any).
SELECT reply_to_notification, count(*) FROM messages
WHERE reply_to_notification IN (SELECT value FROM json_each(:notification_ids))
GROUP BY reply_to_notification;

-- name: insert_direct_message
-- A new direct message and the event that tells its recipient of it (message.created, its
-- data naming the message by the id the first statement gave it); the message's id.
-- dialect: two statements here (SQLite has no data-modifying CTE); one there
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
INSERT INTO events (kind, audience, subject_id, data, created_at, traceparent)
VALUES (
    'message.created', :to, last_insert_rowid(),
    json_object('message_id', last_insert_rowid(), 'from_agent', :from_agent, 'to', :to),
    :created_at, :traceparent
);
