-- Tasks asked of an agent over A2A (relay_core/storage/a2a_tasks.py runs these). A statement
-- that answers them selects each task's columns with the conversation it belongs to, the latest
-- note of that conversation (latest_note) and the pending approval that holds it up
-- (waiting_on), each read by a lateral join.

-- name: insert_a2a_task
-- A task just asked of an agent over A2A.
INSERT INTO a2a_tasks (task_id, agent_id, caller, context_id, message_id, created_at)
VALUES (:task_id, :agent_id, :caller, :context_id, :message_id, :created_at);

-- name: a2a_task_of_message
-- The task an asker's message (by its id) started with the agent, if one did.
SELECT task_id FROM a2a_tasks
WHERE caller = :caller AND agent_id = :agent_id AND message_id = :message_id;

-- name: get_a2a_task
-- A task asked of the agent over A2A.
SELECT t.*, a.context_id, a.message_id, n.latest_note, w.waiting_on
FROM a2a_tasks a JOIN tasks t ON t.task_id = a.task_id
LEFT JOIN LATERAL (
    SELECT to_jsonb(e) AS latest_note FROM task_events e
    WHERE e.task_id = a.task_id AND e.kind IN ('message', 'input_required')
    ORDER BY e.event_id DESC LIMIT 1) n ON true
LEFT JOIN LATERAL (
    SELECT to_jsonb(p) AS waiting_on FROM approvals p
    WHERE p.task_id = a.task_id AND p.status = 'pending'
    ORDER BY p.approval_id DESC LIMIT 1) w ON true
WHERE a.task_id = :task_id AND a.agent_id = :agent_id;

-- name: page_a2a_tasks
-- A page of the tasks an asker (:caller; NULL: any, for the operator) asked of the agent,
-- the most recently changed first, after (:before_at, :before_id) (NULL: from the newest),
-- of one conversation, of the statuses in :statuses (a JSON array), asking their asker a
-- question or not (:asking: the latest note of their conversation is the agent's question, or
-- an approval of the operator's that names the task is pending),
-- and changed since :changed_since, where given.
SELECT t.*, a.context_id, a.message_id, n.latest_note, w.waiting_on
FROM a2a_tasks a JOIN tasks t ON t.task_id = a.task_id
LEFT JOIN LATERAL (
    SELECT to_jsonb(e) AS latest_note FROM task_events e
    WHERE e.task_id = a.task_id AND e.kind IN ('message', 'input_required')
    ORDER BY e.event_id DESC LIMIT 1) n ON true
LEFT JOIN LATERAL (
    SELECT to_jsonb(p) AS waiting_on FROM approvals p
    WHERE p.task_id = a.task_id AND p.status = 'pending'
    ORDER BY p.approval_id DESC LIMIT 1) w ON true
WHERE a.agent_id = :agent_id
  AND (:caller::text IS NULL OR a.caller = :caller)
  AND (:context_id::text IS NULL OR a.context_id = :context_id)
  AND (:statuses::jsonb IS NULL OR t.status IN (SELECT jsonb_array_elements_text(:statuses)))
  AND (:asking::boolean IS NULL OR :asking = (
       coalesce(n.latest_note ->> 'kind' = 'input_required', false)
       OR w.waiting_on IS NOT NULL))
  AND (:changed_since::timestamptz IS NULL OR t.updated_at >= :changed_since)
  AND (:before_at::timestamptz IS NULL OR (t.updated_at, t.task_id) < (:before_at, :before_id))
ORDER BY t.updated_at DESC, t.task_id DESC
LIMIT :limit;

-- name: count_a2a_tasks
-- How many tasks page_a2a_tasks would list over every page.
SELECT count(*)
FROM a2a_tasks a JOIN tasks t ON t.task_id = a.task_id
LEFT JOIN LATERAL (
    SELECT to_jsonb(e) AS latest_note FROM task_events e
    WHERE e.task_id = a.task_id AND e.kind IN ('message', 'input_required')
    ORDER BY e.event_id DESC LIMIT 1) n ON true
LEFT JOIN LATERAL (
    SELECT to_jsonb(p) AS waiting_on FROM approvals p
    WHERE p.task_id = a.task_id AND p.status = 'pending'
    ORDER BY p.approval_id DESC LIMIT 1) w ON true
WHERE a.agent_id = :agent_id
  AND (:caller::text IS NULL OR a.caller = :caller)
  AND (:context_id::text IS NULL OR a.context_id = :context_id)
  AND (:statuses::jsonb IS NULL OR t.status IN (SELECT jsonb_array_elements_text(:statuses)))
  AND (:asking::boolean IS NULL OR :asking = (
       coalesce(n.latest_note ->> 'kind' = 'input_required', false)
       OR w.waiting_on IS NOT NULL))
  AND (:changed_since::timestamptz IS NULL OR t.updated_at >= :changed_since);
