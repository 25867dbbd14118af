-- The event feed (relay_core/storage/events.py runs these). A row's id is drawn from its
-- transaction (relay_feed_id, postgres/feed.py), and a reader sees the rows below the horizon
-- (relay_feed_horizon): nothing can later commit below a row it has read. A statement that
-- reads the feed answers, with each row, the lowest id of the committed rows it would read
-- that wait above the horizon ("held", NULL when none; one row of NULLs and it when nothing is
-- found), which the runner notes so that its readers are woken once the horizon passes it.

-- name: add_event
-- An event of the feed; :feed_ordinal is its ordinal among its transaction's.
INSERT INTO events (event_id, kind, audience, subject_id, data, created_at, traceparent)
VALUES (
    relay_feed_id(:feed_ordinal), :kind, :audience, :subject_id, :data, :created_at, :traceparent
);

-- name: newest_event
-- The newest event a reader may see.
SELECT page.*, horizon.held
FROM (SELECT min(event_id) AS held FROM events WHERE event_id >= relay_feed_horizon())
    AS horizon
LEFT JOIN LATERAL (
    SELECT * FROM events WHERE event_id < relay_feed_horizon() ORDER BY event_id DESC LIMIT 1
) AS page ON true;

-- name: events_after
-- Events after :after, oldest first, up to :limit.
SELECT page.*, horizon.held
FROM (SELECT min(event_id) AS held FROM events WHERE event_id >= relay_feed_horizon())
    AS horizon
LEFT JOIN LATERAL (
    SELECT * FROM events
    WHERE event_id > :after AND event_id < relay_feed_horizon()
    ORDER BY event_id LIMIT :limit
) AS page ON true
ORDER BY page.event_id;

-- name: events_after_for
-- events_after of the audiences asked for, through ix_events_audience; held only by rows of
-- those audiences, so that a fleet's readers are not woken again by each other's rows.
SELECT page.*, horizon.held
FROM (
    SELECT min(event_id) AS held FROM events
    WHERE event_id >= relay_feed_horizon() AND audience = ANY(:audiences::text[])
) AS horizon
LEFT JOIN LATERAL (
    SELECT * FROM events
    WHERE event_id > :after AND event_id < relay_feed_horizon()
      AND audience = ANY(:audiences::text[])
    ORDER BY event_id LIMIT :limit
) AS page ON true
ORDER BY page.event_id;
