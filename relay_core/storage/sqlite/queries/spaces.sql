-- Spaces, groups of rooms (relay_core/storage/spaces.py runs these). A statement that answers
-- records selects their columns, read into the model.

-- name: get_space
-- One space.
SELECT * FROM spaces WHERE space_id = :space_id;

-- name: insert_space
-- A new space.
INSERT INTO spaces (space_id, name, description, status, created_at, archived_at)
VALUES (:space_id, :name, :description, :status, :created_at, :archived_at);

-- name: archive_space
-- An active space archived at :now; nothing if it was not active.
UPDATE spaces SET status = 'archived', archived_at = :now
WHERE space_id = :space_id AND status = 'active'
RETURNING *;

-- name: page_spaces
-- A page of spaces by id, after :after (NULL: from the first).
SELECT * FROM spaces
WHERE (:after IS NULL OR space_id > :after)
ORDER BY space_id LIMIT +:limit;

-- name: page_active_spaces
-- page_spaces of the active ones.
SELECT * FROM spaces
WHERE status = 'active' AND (:after IS NULL OR space_id > :after)
ORDER BY space_id LIMIT +:limit;

-- name: active_spaces
-- Every active space, by id.
SELECT * FROM spaces WHERE status = 'active' ORDER BY space_id;
