-- Agents (relay_core/storage/agents.py runs these). A statement that answers agents selects
-- their columns, read into the model.

-- name: get_agent
-- One agent.
SELECT * FROM agents WHERE agent_id = :agent_id;

-- name: count_agent
-- 1 if the agent is registered, else 0 (cheaper than reading it).
SELECT count(*) FROM agents WHERE agent_id = :agent_id;

-- name: agent_by_token
-- The agent whose token has this hash.
SELECT agent_id FROM agents WHERE token_hash = :token_hash;

-- name: insert_agent
-- A new agent.
INSERT INTO agents (
    agent_id, name, kind, capabilities, metadata, status, note, last_seen_at, created_at,
    updated_at, token_hash
) VALUES (
    :agent_id, :name, :kind, :capabilities, :metadata, :status, :note, :last_seen_at,
    :created_at, :updated_at, :token_hash
);

-- name: register_agent_again
-- A registered agent's fields as registered again: each one the body gave (:set_name, ...),
-- its token's hash if one was issued.
UPDATE agents
SET name = CASE WHEN :set_name THEN :name ELSE name END,
    kind = CASE WHEN :set_kind THEN :kind ELSE kind END,
    capabilities = CASE WHEN :set_capabilities THEN :capabilities ELSE capabilities END,
    metadata = CASE WHEN :set_metadata THEN :metadata ELSE metadata END,
    token_hash = coalesce(:token_hash, token_hash),
    updated_at = :now
WHERE agent_id = :agent_id
RETURNING *;

-- name: record_heartbeat
-- A sign of life at :now, with what the agent reported (a field not reported stays).
UPDATE agents
SET status = coalesce(:status, status), note = coalesce(:note, note),
    metadata = coalesce(:metadata, metadata), last_seen_at = :now
WHERE agent_id = :agent_id
RETURNING *;

-- name: set_agent_token
-- The hash of the agent's new token.
UPDATE agents SET token_hash = :token_hash, updated_at = :now WHERE agent_id = :agent_id
RETURNING *;

-- name: count_agents
-- How many agents are registered.
SELECT count(*) FROM agents;

-- name: count_agents_seen_since
-- How many agents gave a sign of life after :since.
SELECT count(*) FROM agents WHERE last_seen_at > :since;

-- name: page_agents
-- A page of agents by id, after :after (NULL: from the first).
SELECT * FROM agents
WHERE (:after IS NULL OR agent_id > :after)
ORDER BY agent_id LIMIT +:limit;

-- name: set_agent_a2a
-- How the agent is reached over A2A (the JSON of A2AConfig).
UPDATE agents SET a2a = :a2a, updated_at = :now WHERE agent_id = :agent_id
RETURNING *;

-- name: agents_reachable_over_a2a
-- The first :limit agents reachable over A2A, by id.
-- dialect: a JSON field is read with json_extract here, ->> there
SELECT * FROM agents
WHERE json_extract(a2a, '$.enabled')
ORDER BY agent_id LIMIT +:limit;
