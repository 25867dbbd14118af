-- Enrollments: agents asking to join, each with its approval (relay_core/storage/
-- enrollments.py runs these). A statement that answers enrollments selects each as JSON.
-- The JSON is written once, by the view enrollments_encoded; a RETURNING
-- writes it itself.

-- name: get_enrollment
-- One enrollment.
SELECT encoded FROM enrollments_encoded WHERE enroll_id = :enroll_id;

-- name: enrollments_by_id
-- The enrollments of :enroll_ids, by id.
SELECT encoded FROM enrollments_encoded
WHERE enroll_id IN (SELECT value FROM json_each(:enroll_ids))
ORDER BY enroll_id;

-- name: insert_enrollment
-- A new enrollment; its id.
INSERT INTO enrollments
    (agent_id, name, kind, capabilities, metadata, reason, status, approval_id,
     token_delivered, created_at, decided_at, claim_hash)
VALUES
    (:agent_id, :name, :kind, :capabilities, :metadata, :reason, :status, :approval_id,
     :token_delivered, :created_at, :decided_at, :claim_hash)
RETURNING enroll_id;

-- name: set_enrollment_approval
-- The approval that decides an enrollment.
UPDATE enrollments SET approval_id = :approval_id WHERE enroll_id = :enroll_id;

-- name: decide_enrollment
-- A pending enrollment decided (approved, rejected, expired); nothing if it was not pending.
UPDATE enrollments SET status = :status, decided_at = :decided_at
WHERE enroll_id = :enroll_id AND status = 'pending'
RETURNING json_object(
    'enroll_id', enroll_id, 'agent_id', agent_id, 'name', name, 'kind', kind,
    'capabilities', json(capabilities), 'metadata', json(metadata), 'reason', reason,
    'status', status, 'approval_id', approval_id, 'token_delivered', token_delivered,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'decided_at', replace(decided_at, ' ', 'T') || 'Z', 'claim_hash', claim_hash
);

-- name: deliver_enrollment_token
-- An enrollment whose agent's token is delivered now; nothing if it was before.
UPDATE enrollments SET token_delivered = TRUE
WHERE enroll_id = :enroll_id AND NOT token_delivered
RETURNING json_object(
    'enroll_id', enroll_id, 'agent_id', agent_id, 'name', name, 'kind', kind,
    'capabilities', json(capabilities), 'metadata', json(metadata), 'reason', reason,
    'status', status, 'approval_id', approval_id, 'token_delivered', token_delivered,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'decided_at', replace(decided_at, ' ', 'T') || 'Z', 'claim_hash', claim_hash
);

-- name: enrollments_past_time
-- Up to :limit pending enrollments made before :before, oldest first.
SELECT encoded FROM enrollments_encoded
WHERE status = 'pending' AND created_at < :before
ORDER BY created_at LIMIT +:limit;
