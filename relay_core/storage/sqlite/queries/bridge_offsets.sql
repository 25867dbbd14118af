-- Where each operator platform's updates, and the webhooks' fan-out, have been applied up to
-- (relay_core/storage/bridge_offsets.py runs these). A statement that answers an offset
-- selects its columns, read into the model.

-- name: get_bridge_offset
-- One platform's offset.
SELECT * FROM bridge_offsets WHERE bridge = :bridge;

-- name: start_bridge_offset
-- A platform's first offset; nothing if another instance stored one meanwhile.
INSERT INTO bridge_offsets (bridge, last_update_id, updated_at)
VALUES (:bridge, :last_update_id, :now)
ON CONFLICT (bridge) DO NOTHING;

-- name: move_bridge_offset
-- The offset moved on to :last_update_id, if it is still where it was read (:was).
UPDATE bridge_offsets SET last_update_id = :last_update_id, updated_at = :now
WHERE bridge = :bridge AND last_update_id = :was;

-- name: keep_bridge_cursor
-- Where a platform resumes (a token it gave), kept whether or not it had an offset.
INSERT INTO bridge_offsets (bridge, last_update_id, updated_at, cursor)
VALUES (:bridge, 0, :now, :cursor)
ON CONFLICT (bridge) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at;
