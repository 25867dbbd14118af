-- The first answers to creates made with a retry key, sealed (relay_core/storage/
-- idempotency_keys.py runs these; relay_core/idempotency.py says why they are sealed).

-- name: find_idempotency_key
-- The answer kept for :key_hash in :scope, if it was kept after :since.
SELECT * FROM idempotency_keys
WHERE scope = :scope AND key_hash = :key_hash AND created_at > :since
LIMIT 1;

-- name: forget_idempotency_keys
-- The answers kept before :before, no longer given again.
DELETE FROM idempotency_keys WHERE created_at < :before;

-- name: insert_idempotency_key
-- A new answer to give again.
INSERT INTO idempotency_keys (scope, key_hash, fingerprint, sealed_body, created_at)
VALUES (:scope, :key_hash, :fingerprint, :sealed_body, :created_at);
