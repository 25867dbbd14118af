-- Rooms' places on the operator's platforms (relay_core/storage/room_threads.py runs
-- these). A statement that answers records selects their columns, read into the model.

-- name: insert_room_thread
-- A room's new place on a platform.
INSERT INTO room_threads (room_id, bridge, platform_thread_id, created_at)
VALUES (:room_id, :bridge, :platform_thread_id, :created_at);

-- name: room_threads_of_room
-- A room's places on the platforms.
SELECT * FROM room_threads WHERE room_id = :room_id ORDER BY thread_key;

-- name: room_threads_on_bridge
-- Every room's place on one platform.
SELECT * FROM room_threads WHERE bridge = :bridge ORDER BY thread_key;
