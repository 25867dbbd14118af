-- Rooms and their members (relay_core/storage/rooms.py runs these). A statement that answers
-- records selects their columns, read into the model.

-- name: get_room
-- One room.
SELECT * FROM rooms WHERE room_id = :room_id;

-- name: insert_room
-- A new room.
INSERT INTO rooms (room_id, name, topic, space_id, created_by, created_at, platform_thread_id)
VALUES (:room_id, :name, :topic, :space_id, :created_by, :created_at, :platform_thread_id);

-- name: page_rooms
-- A page of rooms by id, after :after (NULL: from the first).
SELECT * FROM rooms
WHERE (:after IS NULL OR room_id > :after)
ORDER BY room_id LIMIT +:limit;

-- name: rooms_in_spaces
-- The rooms of the spaces :space_ids, by id.
SELECT * FROM rooms
WHERE space_id IN (SELECT value FROM json_each(:space_ids))
ORDER BY room_id;

-- name: is_member
-- 1 if the agent is a member of the room, else 0.
SELECT count(*) FROM room_members WHERE room_id = :room_id AND agent_id = :agent_id;

-- name: rooms_of_member
-- The rooms an agent is a member of.
SELECT room_id FROM room_members WHERE agent_id = :agent_id ORDER BY room_id;

-- name: get_membership
-- An agent's membership of a room.
SELECT * FROM room_members WHERE room_id = :room_id AND agent_id = :agent_id;

-- name: insert_membership
-- A new membership; its id.
INSERT INTO room_members (room_id, agent_id, joined_at)
VALUES (:room_id, :agent_id, :joined_at)
RETURNING member_id;
