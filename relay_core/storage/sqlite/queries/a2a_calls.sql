-- A2A calls: messages sent to external A2A agents on an agent's behalf (relay_core/storage/
-- a2a_calls.py runs these). A record leaves the sealed bearer token out.

-- name: insert_a2a_call
-- A new call; its id.
INSERT INTO a2a_calls
    (agent_id, url, status, approval_id, message, context_id, bearer_sealed, due_at,
     created_at, updated_at)
VALUES
    (:agent_id, :url, :status, :approval_id, :message, :context_id, :bearer_sealed, :due_at,
     :created_at, :updated_at)
RETURNING call_id;

-- name: get_a2a_call
-- One call.
SELECT * FROM a2a_calls WHERE call_id = :call_id;

-- name: a2a_call_bearer
-- The bearer token a call was given, sealed (NULL: none).
SELECT bearer_sealed FROM a2a_calls WHERE call_id = :call_id;

-- name: save_a2a_call
-- A call as it stands now, if it is unchanged since it was read at :updated_at_read.
UPDATE a2a_calls
SET url = :url, message = :message, status = :status, approval_id = :approval_id,
    remote_name = :remote_name,
    endpoint = :endpoint, remote_task_id = :remote_task_id, context_id = :context_id,
    state = :state, answer = :answer, error = :error, followed_until = :followed_until,
    due_at = :due_at, updated_at = :updated_at
WHERE call_id = :call_id AND updated_at = :updated_at_read;

-- name: page_a2a_calls
-- A page of calls, newest first, of one caller (:agent_id NULL: of every one), in one status
-- (:status NULL: in any), after the call :before_id (NULL: from the newest).
SELECT * FROM a2a_calls
WHERE (:agent_id IS NULL OR agent_id = :agent_id)
    AND (:status IS NULL OR status = :status)
    AND (:before_id IS NULL OR call_id < :before_id)
ORDER BY call_id DESC LIMIT +:limit;

-- name: due_a2a_calls
-- Calls the follower has to act on: due by :now (to send, or to read their task again), and
-- those held for an approval that is no longer pending.
SELECT * FROM (
    SELECT * FROM a2a_calls WHERE due_at <= :now
    UNION ALL
    SELECT c.* FROM a2a_calls AS c
    JOIN approvals AS a ON a.approval_id = c.approval_id
    WHERE c.status = 'awaiting_approval' AND a.status <> 'pending'
) AS due ORDER BY call_id LIMIT +:limit;
