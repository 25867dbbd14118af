-- The event feed (relay_core/storage/events.py runs these). A row's id is drawn from its
-- transaction (relay_feed_id, postgres/feed.py), and a reader sees the rows below the horizon
-- (relay_feed_horizon): nothing can later commit below a row it has read. A statement that
-- reads the feed answers, with each row, the lowest id of the committed rows it would read
-- that wait above the horizon ("held", NULL when none; one row of NULLs and it when nothing is
-- found), which the runner notes so that its readers are woken once the horizon passes it;
-- a read of some audiences, that row's audience too ("held_audience": its readers alone).

-- name: add_event
-- An event of the feed; :feed_ordinal is its ordinal among its transaction's.
INSERT INTO events (event_id, kind, audience, subject_id, data, created_at, traceparent)
VALUES (
    relay_feed_id(:feed_ordinal), :kind, :audience, :subject_id, :data, :created_at, :traceparent
);

-- name: newest_event
-- The newest event a reader of every event may see.
SELECT page.*, horizon.held
FROM (SELECT min(event_id) AS held FROM events WHERE event_id >= relay_feed_horizon())
    AS horizon
LEFT JOIN LATERAL (
    SELECT * FROM events WHERE event_id < relay_feed_horizon() ORDER BY event_id DESC LIMIT 1
) AS page ON true;

-- name: newest_event_for
-- The newest event of the audiences asked for that a reader may see (each audience's newest
-- through ix_events_audience), and the first row of those audiences held above the
-- horizon, with its audience (see events_after_for).
SELECT page.*, horizon.held, horizon.held_audience
FROM (VALUES (1)) AS one
LEFT JOIN LATERAL (
    SELECT first.event_id AS held, first.audience AS held_audience
    FROM (SELECT DISTINCT unnest(:audiences::text[]) AS audience) AS asked
    CROSS JOIN LATERAL (
        SELECT event_id, audience FROM events
        WHERE audience = asked.audience AND event_id >= relay_feed_horizon()
        ORDER BY event_id LIMIT 1
    ) AS first
    ORDER BY first.event_id LIMIT 1
) AS horizon ON true
LEFT JOIN LATERAL (
    SELECT newest.*
    FROM (SELECT DISTINCT unnest(:audiences::text[]) AS audience) AS asked
    CROSS JOIN LATERAL (
        SELECT * FROM events
        WHERE audience = asked.audience AND event_id < relay_feed_horizon()
        ORDER BY event_id DESC LIMIT 1
    ) AS newest
    ORDER BY newest.event_id DESC LIMIT 1
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
-- events_after of the audiences asked for. Each audience's rows are read on their own range
-- of ix_events_audience and merged: the plan PostgreSQL keeps for a prepared statement
-- would otherwise walk every event since :after. The first row of those audiences held
-- above the horizon comes with its audience: only that audience's readers are woken when it
-- shows, not (through everyone's audience) every reader of the process.
SELECT page.*, horizon.held, horizon.held_audience
FROM (VALUES (1)) AS one
LEFT JOIN LATERAL (
    SELECT first.event_id AS held, first.audience AS held_audience
    FROM (SELECT DISTINCT unnest(:audiences::text[]) AS audience) AS asked
    CROSS JOIN LATERAL (
        SELECT event_id, audience FROM events
        WHERE audience = asked.audience AND event_id >= relay_feed_horizon()
        ORDER BY event_id LIMIT 1
    ) AS first
    ORDER BY first.event_id LIMIT 1
) AS horizon ON true
LEFT JOIN LATERAL (
    SELECT found.*
    FROM (SELECT DISTINCT unnest(:audiences::text[]) AS audience) AS asked
    CROSS JOIN LATERAL (
        SELECT * FROM events
        WHERE audience = asked.audience AND event_id > :after AND event_id < relay_feed_horizon()
        ORDER BY event_id LIMIT :limit
    ) AS found
    ORDER BY found.event_id LIMIT :limit
) AS page ON true
ORDER BY page.event_id;
