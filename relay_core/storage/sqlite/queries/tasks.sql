-- Tasks (relay_core/storage/tasks.py runs these). A statement that answers tasks selects the
-- row's JSON, kept by the stored column "encoded": byte for byte what
-- model_dump_json writes, so a page is answered as stored.

-- name: get_task
-- One task.
SELECT * FROM tasks WHERE task_id = :task_id;

-- name: insert_task
-- A new task; its id.
INSERT INTO tasks (
    title, description, payload, priority, assignee, room_id, status, created_by, claimed_by,
    claimed_at, lease_expires_at, lease_seconds, attempts, max_attempts, progress, result, error,
    created_at, updated_at, finished_at, traceparent
) VALUES (
    :title, :description, :payload, :priority, :assignee, :room_id, :status, :created_by,
    :claimed_by, :claimed_at, :lease_expires_at, :lease_seconds, :attempts, :max_attempts,
    :progress, :result, :error, :created_at, :updated_at, :finished_at, :traceparent
)
RETURNING task_id;

-- name: claim_open_task
-- Claim a task that is open and assigned to nobody or to the claimer; nothing when it is not.
UPDATE tasks
SET status = 'claimed', claimed_by = :agent_id, claimed_at = :now,
    lease_seconds = :lease_seconds, lease_expires_at = :lease_expires_at,
    attempts = attempts + 1, updated_at = :now
WHERE task_id = :task_id AND status = 'open' AND (assignee IS NULL OR assignee = :agent_id)
RETURNING *;

-- name: reopen_lapsed_task
-- Open again a task whose lease is over, if it is still as it was read.
UPDATE tasks
SET status = 'open', claimed_by = NULL, lease_expires_at = NULL, updated_at = :now
WHERE task_id = :task_id AND status = :status AND claimed_by IS :claimed_by
RETURNING *;

-- name: record_task_progress
-- The claimer's progress: in_progress, the lease renewed, the progress if given.
UPDATE tasks
SET status = 'in_progress', lease_expires_at = :lease_expires_at,
    progress = coalesce(:progress, progress), updated_at = :now
WHERE task_id = :task_id AND status = :status AND claimed_by IS :claimed_by
RETURNING *;

-- name: complete_task
-- Completed by its claimer, with its result.
UPDATE tasks
SET status = 'completed', progress = 100, finished_at = :now, result = :result, error = :error,
    lease_expires_at = NULL, updated_at = :now
WHERE task_id = :task_id AND status = :status AND claimed_by IS :claimed_by
RETURNING *;

-- name: fail_task
-- Failed by its claimer, for good.
UPDATE tasks
SET status = 'failed', finished_at = :now, result = :result, error = :error,
    lease_expires_at = NULL, updated_at = :now
WHERE task_id = :task_id AND status = :status AND claimed_by IS :claimed_by
RETURNING *;

-- name: retry_task
-- Failed by its claimer with attempts left: open again for anyone to claim.
UPDATE tasks
SET status = 'open', claimed_by = NULL, result = :result, error = :error,
    lease_expires_at = NULL, updated_at = :now
WHERE task_id = :task_id AND status = :status AND claimed_by IS :claimed_by
RETURNING *;

-- name: count_lapsed_tasks
-- How many held tasks' leases are over, among those of the assignee, the claimer and the ids
-- asked for (each filter optional).
SELECT count(*) FROM tasks
WHERE status IN ('claimed', 'in_progress') AND lease_expires_at < :now
  AND (:assignee IS NULL OR assignee = :assignee)
  AND (:claimed_by IS NULL OR claimed_by = :claimed_by)
  AND (:after IS NULL OR task_id > :after)
  AND (:through IS NULL OR task_id <= :through);

-- name: lapsed_tasks
-- Held tasks whose leases are over, as count_lapsed_tasks finds them, by id, up to :limit.
-- dialect: PostgreSQL locks the rows it hands out (FOR UPDATE SKIP LOCKED: several instances);
-- SQLite's one writer already does
SELECT * FROM tasks
WHERE status IN ('claimed', 'in_progress') AND lease_expires_at < :now
  AND (:assignee IS NULL OR assignee = :assignee)
  AND (:claimed_by IS NULL OR claimed_by = :claimed_by)
  AND (:after IS NULL OR task_id > :after)
  AND (:through IS NULL OR task_id <= :through)
ORDER BY task_id
LIMIT :limit;

-- name: page_tasks
-- A page of tasks by id, after :after, of the assignee and claimer asked for.
-- dialect: each task's stored JSON here (the hot lists); PostgreSQL answers rows
SELECT task_id, encoded FROM tasks
WHERE (:assignee IS NULL OR assignee = :assignee)
  AND (:claimed_by IS NULL OR claimed_by = :claimed_by)
  AND (:after IS NULL OR task_id > :after)
ORDER BY task_id
LIMIT :limit;

-- name: page_tasks_in_status
-- page_tasks of one status, a statement of its own so that it reads ix_tasks_status_id (an
-- optional status, "(:status IS NULL OR ...)", would be planned to read every task).
-- dialect: each task's stored JSON here (the hot lists); PostgreSQL answers rows
SELECT task_id, encoded FROM tasks
WHERE status = :status
  AND (:assignee IS NULL OR assignee = :assignee)
  AND (:claimed_by IS NULL OR claimed_by = :claimed_by)
  AND (:after IS NULL OR task_id > :after)
ORDER BY task_id
LIMIT :limit;

-- name: count_open_tasks
-- How many tasks are open.
SELECT count(*) FROM tasks WHERE status = 'open';

-- name: cancel_task
-- Cancelled by its creator or the operator before it finished (its claim, if any, ends).
UPDATE tasks
SET status = 'cancelled', finished_at = :now, error = :error, lease_expires_at = NULL,
    updated_at = :now
WHERE task_id = :task_id AND status = :status AND claimed_by IS :claimed_by
RETURNING *;
