-- The action log: what agents and the operator did, and every refused request (relay_core/
-- storage/actions.py runs these).

-- name: insert_action
-- A new action logged; its id.
INSERT INTO actions (agent_id, action, target, params, outcome, task_id, created_at)
VALUES (:agent_id, :action, :target, :params, :outcome, :task_id, :created_at)
RETURNING action_id;

-- name: get_action
-- One action.
SELECT * FROM actions WHERE action_id = :action_id;

-- name: set_action_params
-- An action's parameters replaced.
UPDATE actions SET params = :params WHERE action_id = :action_id;

-- name: page_actions
-- A page of the log, newest first, before :before (NULL: from the newest), of :agent_id
-- (NULL: of everyone).
SELECT * FROM actions
WHERE (:agent_id IS NULL OR agent_id = :agent_id) AND (:before IS NULL OR action_id < :before)
ORDER BY action_id DESC LIMIT +:limit;
