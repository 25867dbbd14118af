-- The operator's policies, their kept versions and the decisions their limits count
-- (relay_core/storage/policies.py runs these).

-- name: get_policy
-- One policy, as it is now.
SELECT * FROM policies WHERE policy_id = :policy_id;

-- name: insert_policy
-- A new policy; its id.
INSERT INTO policies
    (name, decision, note, priority, enabled, match, "limit", answer, remind_after,
     escalate_after, version, created_at, updated_at)
VALUES
    (:name, :decision, :note, :priority, :enabled, :match, :limit, :answer, :remind_after,
     :escalate_after, :version, :created_at, :updated_at)
RETURNING policy_id;

-- name: hold_policy
-- A policy that is still enabled at :version, held until the transaction ends (its decision
-- is counted against its limit once).
UPDATE policies SET version = version
WHERE policy_id = :policy_id AND version = :version AND enabled;

-- name: next_policy_version
-- A policy replaced whole by its next version, :version, if it is still at the one before.
UPDATE policies
SET name = :name, decision = :decision, note = :note, priority = :priority,
    enabled = :enabled, match = :match, "limit" = :limit, answer = :answer,
    remind_after = :remind_after, escalate_after = :escalate_after, version = :version,
    updated_at = :updated_at
WHERE policy_id = :policy_id AND version = :version - 1
RETURNING *;

-- name: page_policies
-- A page of policies by id, after :after (NULL: from the first).
SELECT * FROM policies
WHERE (:after IS NULL OR policy_id > :after)
ORDER BY policy_id LIMIT +:limit;

-- name: enabled_policies
-- Up to :limit enabled policies, by id.
SELECT * FROM policies WHERE enabled ORDER BY policy_id LIMIT +:limit;

-- name: insert_policy_version
-- A version of a policy, kept as it was.
INSERT INTO policy_versions (policy_id, version, policy, created_at)
VALUES (:policy_id, :version, :policy, :created_at);

-- name: get_policy_version
-- A policy as it was at :version.
SELECT * FROM policy_versions WHERE policy_id = :policy_id AND version = :version;

-- name: insert_policy_use
-- A decision a policy made, for its limit to count.
INSERT INTO policy_uses (policy_id, agent_id, approval_id, decided_at)
VALUES (:policy_id, :agent_id, :approval_id, :decided_at);

-- name: count_policy_uses
-- How many decisions a policy made after :since, for :agent_id (NULL: for anyone).
SELECT count(*) FROM policy_uses
WHERE policy_id = :policy_id AND (:agent_id IS NULL OR agent_id = :agent_id)
    AND decided_at > :since;

-- name: forget_policy_uses
-- A policy's decisions made before :before, which no window counts any more.
DELETE FROM policy_uses WHERE policy_id = :policy_id AND decided_at < :before;
