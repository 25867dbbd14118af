-- Enrollments: agents asking to join, each with its approval (relay_core/storage/
-- enrollments.py runs these).

-- name: get_enrollment
-- One enrollment.
SELECT * FROM enrollments WHERE enroll_id = :enroll_id;

-- name: enrollments_by_id
-- The enrollments of :enroll_ids, by id.
SELECT * FROM enrollments
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
RETURNING *;

-- name: deliver_enrollment_token
-- An enrollment whose agent's token is delivered now; nothing if it was before.
UPDATE enrollments SET token_delivered = TRUE
WHERE enroll_id = :enroll_id AND NOT token_delivered
RETURNING *;

-- name: enrollments_past_time
-- Up to :limit pending enrollments made before :before, oldest first.
SELECT * FROM enrollments
WHERE status = 'pending' AND created_at < :before
ORDER BY created_at LIMIT +:limit;
