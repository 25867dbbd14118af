-- Browser stream tickets, kept by their hash (relay_core/storage/stream_tickets.py runs these).
-- A statement that answers a ticket selects its columns, read into the model.

-- name: get_stream_ticket
-- The ticket of this hash.
SELECT * FROM stream_tickets WHERE ticket_hash = :ticket_hash;

-- name: insert_stream_ticket
-- A new ticket.
INSERT INTO stream_tickets (ticket_hash, kind, agent_id, token_hash, expires_at)
VALUES (:ticket_hash, :kind, :agent_id, :token_hash, :expires_at);

-- name: delete_expired_stream_tickets
-- The tickets expired by :now.
DELETE FROM stream_tickets WHERE expires_at < :now;
