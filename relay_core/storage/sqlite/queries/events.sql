-- The event feed (relay_core/storage/events.py runs these). One writer adds rows one at a
-- time, so ids rise in commit order and a reader sees every row below the newest it read. A
-- statement that answers events selects each as JSON (``event_json``), read into the model:
-- the feed is read by every open stream, and JSON built here costs no decoding per column.

-- name: add_event
-- An event of the feed.
-- dialect: PostgreSQL numbers the feed with relay_feed_id (commit order across connections);
-- SQLite's one writer numbers it by rowid
INSERT INTO events (kind, audience, subject_id, data, created_at, traceparent)
VALUES (:kind, :audience, :subject_id, :data, :created_at, :traceparent);

-- name: newest_event
-- The newest event.
-- dialect: built as JSON here: every open stream reads the feed (PostgreSQL answers plain rows
-- and whether commits wait above the horizon)
SELECT json_object(
    'event_id', event_id, 'kind', kind, 'audience', audience, 'subject_id', subject_id,
    'data', json(data), 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'traceparent', traceparent
) AS event_json
FROM events ORDER BY event_id DESC LIMIT 1;

-- name: newest_event_for
-- The newest event of the audiences asked for (a JSON array): each audience's newest through
-- ix_events_audience.
-- dialect: built as JSON here: every open stream reads the feed (PostgreSQL answers plain rows
-- and whether commits wait above the horizon)
SELECT json_object(
    'event_id', event_id, 'kind', kind, 'audience', audience, 'subject_id', subject_id,
    'data', json(data), 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'traceparent', traceparent
) AS event_json
FROM events
WHERE event_id = (
    SELECT max((SELECT max(event_id) FROM events WHERE audience = asked.value))
    FROM json_each(:audiences) AS asked
);

-- name: events_after
-- Events after :after, oldest first, up to :limit.
-- dialect: built as JSON here: every open stream reads the feed (PostgreSQL answers plain rows
-- and whether commits wait above the horizon)
SELECT json_object(
    'event_id', event_id, 'kind', kind, 'audience', audience, 'subject_id', subject_id,
    'data', json(data), 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'traceparent', traceparent
) AS event_json
FROM events WHERE event_id > :after ORDER BY event_id LIMIT +:limit;

-- name: events_after_for
-- events_after of the audiences asked for (a JSON array), through ix_events_audience.
-- dialect: built as JSON here: every open stream reads the feed (PostgreSQL answers plain rows
-- and whether commits wait above the horizon)
SELECT json_object(
    'event_id', event_id, 'kind', kind, 'audience', audience, 'subject_id', subject_id,
    'data', json(data), 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'traceparent', traceparent
) AS event_json
FROM events
WHERE event_id > :after AND audience IN (SELECT value FROM json_each(:audiences))
ORDER BY event_id LIMIT +:limit;
