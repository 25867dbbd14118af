-- Approvals: what agents and enrollments ask the operator (relay_core/storage/approvals.py
-- runs these).

-- name: get_approval
-- One approval.
SELECT * FROM approvals WHERE approval_id = :approval_id;

-- name: insert_approval
-- A new approval (pending, or decided at once by a policy); its id.
INSERT INTO approvals
    (kind, status, title, detail, payload, requested_by, subject_id, audience, created_at,
     expires_at, decided_at, decided_by, note, platform_message_id, options, multiple,
     allow_other, answer, remind_at, escalate_at, escalated_to, task_id, traceparent)
VALUES
    (:kind, :status, :title, :detail, :payload, :requested_by, :subject_id, :audience,
     :created_at, :expires_at, :decided_at, :decided_by, :note, :platform_message_id, :options,
     :multiple, :allow_other, :answer, :remind_at, :escalate_at, :escalated_to, :task_id,
     :traceparent)
RETURNING approval_id;

-- name: decide_approval
-- A pending approval decided (approved, rejected, withdrawn, expired, answered), approved as
-- the operator changed it if :approved_payload is not null, naming the policy that remembers
-- it if :remembered_policy_id is not null, asking the agent to stop if :interrupt, a
-- question's :answer; nothing if it was not pending.
UPDATE approvals
SET status = :status, decided_at = :decided_at, decided_by = :decided_by, note = :note,
    approved_payload = :approved_payload, remembered_policy_id = :remembered_policy_id,
    interrupt = :interrupt, answer = :answer
WHERE approval_id = :approval_id AND status = 'pending'
RETURNING *;

-- name: set_approval_platform_message
-- The platform message an approval names itself (the first that showed it).
UPDATE approvals SET platform_message_id = :platform_message_id
WHERE approval_id = :approval_id
RETURNING *;

-- name: approval_on_platform
-- The approval that names the platform's message itself (shown before posts were kept).
SELECT * FROM approvals WHERE platform_message_id = :platform_message_id LIMIT 1;

-- name: approvals_past_deadline
-- Up to :limit pending approvals whose deadline is before :now.
SELECT * FROM approvals
WHERE status = 'pending' AND expires_at < :now
LIMIT +:limit;

-- name: approvals_to_remind
-- Up to :limit pending approvals whose reminder is due at :now and not yet sent.
SELECT * FROM approvals
WHERE status = 'pending' AND reminded_at IS NULL AND remind_at <= :now
LIMIT +:limit;

-- name: remind_approval
-- A pending approval's reminder marked sent at :now, if it was not yet (nothing if it was,
-- or the approval is decided).
UPDATE approvals SET reminded_at = :now
WHERE approval_id = :approval_id AND status = 'pending' AND reminded_at IS NULL;

-- name: approvals_to_escalate
-- Up to :limit pending approvals whose next step of the escalation is due at :now.
SELECT * FROM approvals
WHERE status = 'pending' AND escalate_at <= :now
LIMIT +:limit;

-- name: escalate_approval
-- A pending approval offered on the step :escalated_to, next due at :escalate_at (NULL: no
-- further step), if it still waited for the step due at :due (nothing otherwise).
UPDATE approvals SET escalated_to = :escalated_to, escalate_at = :escalate_at
WHERE approval_id = :approval_id AND status = 'pending' AND escalate_at = :due;

-- name: page_approvals
-- A page of approvals, newest first, before :before (NULL: from the newest), in :status
-- (NULL: in any), of those :seen_by may see (NULL: all; else the ones for everyone, '*' as
-- relay_api.models.EVERYONE, and its own).
SELECT * FROM approvals
WHERE (:status IS NULL OR status = :status)
    AND (:seen_by IS NULL OR audience IN ('*', :seen_by))
    AND (:before IS NULL OR approval_id < :before)
ORDER BY approval_id DESC LIMIT +:limit;

-- name: count_pending_approvals
-- How many approvals wait for a decision, of those :seen_by may see (as in page_approvals).
SELECT count(*) FROM approvals
WHERE status = 'pending' AND (:seen_by IS NULL OR audience IN ('*', :seen_by));
