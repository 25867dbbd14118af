-- Interventions: diagnostic, approval, remediation with evidence (relay_core/storage/
-- interventions.py runs these), with their diagnostics and remediation actions.
-- A diagnostic's content and an action's evidence come as JSON text (a string or an object).

-- name: get_intervention
-- One intervention.
SELECT * FROM interventions WHERE intervention_id = :intervention_id;

-- name: insert_intervention
-- A new intervention.
INSERT INTO interventions
    (intervention_id, status, title, risk, proposed_action, approval_id, approval_status,
     created_by, participants, created_at, updated_at)
VALUES
    (:intervention_id, :status, :title, :risk, :proposed_action, :approval_id,
     :approval_status, :created_by, :participants, :created_at, :updated_at);

-- name: intervention_awaits_approval
-- An intervention awaiting the approval :approval_id of its proposed action, if its approval
-- is still :approval_status_read.
UPDATE interventions
SET status = 'awaiting_approval', title = :title, risk = :risk,
    proposed_action = :proposed_action, approval_id = :approval_id,
    approval_status = 'pending', updated_at = :now
WHERE intervention_id = :intervention_id AND approval_status = :approval_status_read
RETURNING *;

-- name: set_intervention_status
-- An intervention's status, and its approval's where :approval_status is not NULL.
UPDATE interventions
SET status = :status, approval_status = coalesce(:approval_status, approval_status),
    updated_at = :now
WHERE intervention_id = :intervention_id
RETURNING *;

-- name: touch_intervention
-- An intervention changed at :now (a diagnostic came).
UPDATE interventions SET updated_at = :now WHERE intervention_id = :intervention_id;

-- name: set_intervention_participants
-- An intervention's participants, if it is unchanged since :updated_at_read.
UPDATE interventions SET participants = :participants, updated_at = :now
WHERE intervention_id = :intervention_id AND updated_at = :updated_at_read
RETURNING *;

-- name: page_interventions
-- A page of interventions, newest first (by creation, then id), after the one created at
-- :before_at with id :before_id (NULL: from the newest).
SELECT * FROM interventions
WHERE :before_at IS NULL
    OR (created_at, intervention_id) < (:before_at, :before_id)
ORDER BY created_at DESC, intervention_id DESC LIMIT +:limit;

-- name: insert_diagnostic
-- A new diagnostic of an intervention; its id.
INSERT INTO diagnostics
    (intervention_id, agent_id, summary, content, content_type, severity, created_at)
VALUES
    (:intervention_id, :agent_id, :summary, json(:content), :content_type, :severity,
     :created_at)
RETURNING diagnostic_id;

-- name: newest_diagnostics
-- The newest diagnostic of each intervention of :intervention_ids (those with any).
SELECT * FROM diagnostics
WHERE diagnostic_id IN (
    SELECT max(diagnostic_id) FROM diagnostics
    WHERE intervention_id IN (SELECT value FROM json_each(:intervention_ids))
    GROUP BY intervention_id
);

-- name: insert_intervention_action
-- A new remediation action of an intervention, with its evidence; its id.
INSERT INTO intervention_actions
    (intervention_id, agent_id, action, status, evidence_before, evidence_after, link,
     created_at)
VALUES
    (:intervention_id, :agent_id, :action, :status, json(:evidence_before),
     json(:evidence_after), :link, :created_at)
RETURNING action_id;

-- name: newest_intervention_actions
-- The newest remediation action of each intervention of :intervention_ids (those with any).
SELECT * FROM intervention_actions
WHERE action_id IN (
    SELECT max(action_id) FROM intervention_actions
    WHERE intervention_id IN (SELECT value FROM json_each(:intervention_ids))
    GROUP BY intervention_id
);
