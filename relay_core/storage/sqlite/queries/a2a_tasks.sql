-- Tasks asked of an agent over A2A (relay_core/storage/a2a_tasks.py runs these). A statement
-- that answers them selects each task's JSON (task_json) with the conversation it belongs to,
-- the latest note of that conversation and the pending approval that holds it up (the view
-- a2a_tasks_shown, over the tasks' stored JSON).

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
-- dialect: SQLite builds the task's JSON from its stored JSON (a2a_tasks_shown); PostgreSQL
-- joins laterally
SELECT json_set(task, '$.context_id', context_id, '$.message_id', message_id,
                '$.latest_note', json(latest_note), '$.waiting_on', json(waiting_on)) AS task_json
FROM a2a_tasks_shown
WHERE task_id = :task_id AND agent_id = :agent_id;

-- name: page_a2a_tasks
-- A page of the tasks an asker (:caller; NULL: any, for the operator) asked of the agent,
-- the most recently changed first, after (:before_at, :before_id) (NULL: from the newest),
-- of one conversation, of the statuses in :statuses (a JSON array), asking their asker a
-- question or not (:asking: the latest note of their conversation is the agent's question, or
-- an approval of the operator's that names the task is pending),
-- and changed since :changed_since, where given.
-- dialect: SQLite builds the tasks' JSON from their stored JSON (a2a_tasks_shown); PostgreSQL
-- joins laterally
SELECT json_set(task, '$.context_id', context_id, '$.message_id', message_id,
                '$.latest_note', json(latest_note), '$.waiting_on', json(waiting_on)) AS task_json
FROM a2a_tasks_shown
WHERE agent_id = :agent_id
  AND (:caller IS NULL OR caller = :caller)
  AND (:context_id IS NULL OR context_id = :context_id)
  AND (:statuses IS NULL OR status IN (SELECT value FROM json_each(:statuses)))
  AND (:asking IS NULL OR :asking = (
       coalesce(json_extract(latest_note, '$.kind') = 'input_required', 0)
       OR waiting_on IS NOT NULL))
  AND (:changed_since IS NULL OR updated_at >= :changed_since)
  AND (:before_at IS NULL OR updated_at < :before_at
       OR (updated_at = :before_at AND task_id < :before_id))
ORDER BY updated_at DESC, task_id DESC
LIMIT +:limit;

-- name: count_a2a_tasks
-- How many tasks page_a2a_tasks would list over every page.
-- dialect: SQLite reads the tasks' stored JSON through the view a2a_tasks_shown; PostgreSQL
-- joins laterally
SELECT count(*)
FROM a2a_tasks_shown
WHERE agent_id = :agent_id
  AND (:caller IS NULL OR caller = :caller)
  AND (:context_id IS NULL OR context_id = :context_id)
  AND (:statuses IS NULL OR status IN (SELECT value FROM json_each(:statuses)))
  AND (:asking IS NULL OR :asking = (
       coalesce(json_extract(latest_note, '$.kind') = 'input_required', 0)
       OR waiting_on IS NOT NULL))
  AND (:changed_since IS NULL OR updated_at >= :changed_since);
