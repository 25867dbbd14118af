-- Reservations: the paths of a workspace the agents hold (relay_core/storage/reservations.py
-- runs these).

-- name: get_reservation
-- One reservation.
SELECT * FROM reservations WHERE reservation_id = :reservation_id;

-- name: insert_reservation
-- A new active reservation; its id.
INSERT INTO reservations
    (workspace, paths, exclusive, holder, reason, task_id, status, created_at, expires_at)
VALUES
    (:workspace, :paths, :exclusive, :holder, :reason, :task_id, 'active', :created_at,
     :expires_at)
RETURNING reservation_id;

-- name: hold_workspace
-- A workspace's grants one at a time until the transaction ends: nothing to do on SQLite,
-- whose one writer runs every grant in turn.
-- dialect: PostgreSQL takes an advisory lock for the transaction; SQLite's one writer already
-- holds every write
SELECT :workspace;

-- name: active_reservations
-- Every active reservation of :workspace, oldest first (some may be past their deadline).
SELECT * FROM reservations
WHERE workspace = :workspace AND status = 'active'
ORDER BY reservation_id;

-- name: active_reservations_after
-- The active reservations of :workspace granted after reservation :after, oldest first.
SELECT * FROM reservations
WHERE workspace = :workspace AND status = 'active' AND reservation_id > :after
ORDER BY reservation_id;

-- name: page_reservations
-- A page of reservations, newest first, before :before (NULL: from the newest), of
-- :workspace and :holder (NULL: any), active ones unless :include_ended.
SELECT * FROM reservations
WHERE (:workspace IS NULL OR workspace = :workspace)
    AND (:holder IS NULL OR holder = :holder)
    AND (:include_ended OR status = 'active')
    AND (:before IS NULL OR reservation_id < :before)
ORDER BY reservation_id DESC LIMIT +:limit;

-- name: renew_reservation
-- An active reservation not past its deadline at :now, held until :expires_at.
UPDATE reservations SET expires_at = :expires_at
WHERE reservation_id = :reservation_id AND status = 'active' AND expires_at > :now;

-- name: end_reservation
-- An active reservation ended (released, expired) at :ended_at (nothing if it had ended).
UPDATE reservations SET status = :status, ended_at = :ended_at
WHERE reservation_id = :reservation_id AND status = 'active';

-- name: reservations_past_deadline
-- Up to :limit active reservations whose deadline is at or before :now.
SELECT * FROM reservations
WHERE status = 'active' AND expires_at <= :now
LIMIT +:limit;

-- name: reservations_of_ended_tasks
-- Up to :limit active reservations bound to a task their holder no longer holds (done,
-- failed, or its lease lost).
SELECT reservations.* FROM reservations
JOIN tasks ON tasks.task_id = reservations.task_id
WHERE reservations.status = 'active'
    AND reservations.task_id IS NOT NULL
    AND NOT (tasks.status IN ('claimed', 'in_progress')
             AND tasks.claimed_by = reservations.holder)
LIMIT +:limit;
