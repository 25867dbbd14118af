-- The tasks' trails (relay_core/storage/task_events.py runs these). A statement that answers
-- notes selects their columns, read into the model.

-- name: insert_task_event
-- A new note on a task's trail; its id.
INSERT INTO task_events (task_id, agent_id, kind, message, progress, data, created_at)
VALUES (:task_id, :agent_id, :kind, :message, :progress, :data, :created_at)
RETURNING event_id;

-- name: note_on_trail
-- A new note on a task's trail, and the feed's event that tells of it (events.sql).
-- dialect: two statements here (SQLite has no data-modifying CTE); one there
INSERT INTO task_events (task_id, agent_id, kind, message, progress, data, created_at)
VALUES (:task_id, :agent_id, :kind, :message, :progress, :data, :created_at);
INSERT INTO events (kind, audience, subject_id, data, created_at, traceparent)
VALUES (:event_kind, :audience, :subject_id, :event_data, :created_at, :event_traceparent);

-- name: page_task_events
-- A page of a task's trail, oldest first, after :after (NULL: from the first).
SELECT * FROM task_events
WHERE task_id = :task_id AND (:after IS NULL OR event_id > :after)
ORDER BY event_id LIMIT +:limit;

-- name: latest_task_events_of
-- The newest :limit notes of a task's trail of the kinds in :kinds (a JSON array), newest first.
SELECT * FROM task_events
WHERE task_id = :task_id AND kind IN (SELECT value FROM json_each(:kinds))
ORDER BY event_id DESC LIMIT +:limit;
