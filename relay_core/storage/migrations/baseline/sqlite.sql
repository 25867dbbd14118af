-- Relay's schema on SQLite, as the first revision (0043, versions/0043_baseline.py)
-- creates it. A later change to the schema is a revision of its own on top of it.

CREATE TABLE actions (
	action_id INTEGER NOT NULL, 
	agent_id VARCHAR(128) NOT NULL, 
	action VARCHAR(200) NOT NULL, 
	target VARCHAR(1000), 
	params JSON NOT NULL, 
	outcome TEXT, 
	task_id BIGINT, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (action_id)
);

CREATE INDEX ix_actions_agent_id ON actions (agent_id);

CREATE TABLE agents (
	agent_id VARCHAR(128) NOT NULL, 
	name VARCHAR(200), 
	kind VARCHAR(200), 
	capabilities JSON NOT NULL, 
	metadata JSON NOT NULL, 
	status VARCHAR(200), 
	note TEXT, 
	last_seen_at DATETIME, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	token_hash VARCHAR(64), a2a JSON, 
	PRIMARY KEY (agent_id), 
	UNIQUE (token_hash)
);

CREATE TABLE enrollments (
	enroll_id INTEGER NOT NULL, 
	agent_id VARCHAR(128) NOT NULL, 
	name VARCHAR(200), 
	capabilities JSON NOT NULL, 
	metadata JSON NOT NULL, 
	reason TEXT, 
	status VARCHAR(32) NOT NULL, 
	approval_id BIGINT, 
	token_delivered BOOLEAN NOT NULL, 
	created_at DATETIME NOT NULL, 
	decided_at DATETIME, 
	claim_hash VARCHAR(64) NOT NULL, kind VARCHAR(200), 
	PRIMARY KEY (enroll_id)
);

CREATE TABLE notifications (
	notification_id INTEGER NOT NULL, 
	agent_id VARCHAR(128), 
	text TEXT NOT NULL, 
	bridge VARCHAR(32) NOT NULL, 
	platform_message_id VARCHAR(200), 
	status VARCHAR(32) NOT NULL, 
	error TEXT, 
	created_at DATETIME NOT NULL, 
	sent_at DATETIME, traceparent VARCHAR(55), 
	PRIMARY KEY (notification_id)
);

CREATE INDEX ix_notifications_platform ON notifications (bridge, platform_message_id);

CREATE TABLE spaces (
	space_id VARCHAR(128) NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	description TEXT, 
	status VARCHAR(32) NOT NULL, 
	created_at DATETIME NOT NULL, 
	archived_at DATETIME, 
	PRIMARY KEY (space_id)
);

CREATE TABLE diagnostics (
	diagnostic_id INTEGER NOT NULL, 
	intervention_id VARCHAR(128) NOT NULL, 
	agent_id VARCHAR(128) NOT NULL, 
	summary VARCHAR(2000) NOT NULL, 
	content JSON NOT NULL, 
	content_type VARCHAR(200), 
	severity VARCHAR(32) NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (diagnostic_id), 
	FOREIGN KEY(intervention_id) REFERENCES interventions (intervention_id)
);

CREATE INDEX ix_diagnostics_intervention ON diagnostics (intervention_id, diagnostic_id);

CREATE TABLE intervention_actions (
	action_id INTEGER NOT NULL, 
	intervention_id VARCHAR(128) NOT NULL, 
	agent_id VARCHAR(128) NOT NULL, 
	action TEXT NOT NULL, 
	status VARCHAR(32) NOT NULL, 
	evidence_before JSON NOT NULL, 
	evidence_after JSON NOT NULL, 
	link VARCHAR(2000), 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (action_id), 
	FOREIGN KEY(intervention_id) REFERENCES interventions (intervention_id)
);

CREATE INDEX ix_intervention_actions_intervention ON intervention_actions (intervention_id, action_id);

CREATE TABLE rooms (
	room_id VARCHAR(128) NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	topic TEXT, 
	space_id VARCHAR(128), 
	created_by VARCHAR(128) NOT NULL, 
	created_at DATETIME NOT NULL, 
	platform_thread_id VARCHAR(200), 
	PRIMARY KEY (room_id), 
	FOREIGN KEY(space_id) REFERENCES spaces (space_id)
);

CREATE INDEX ix_rooms_space_id ON rooms (space_id);

CREATE TABLE task_events (
	event_id INTEGER NOT NULL, 
	task_id BIGINT NOT NULL, 
	agent_id VARCHAR(128), 
	kind VARCHAR(200) NOT NULL, 
	message TEXT, 
	progress INTEGER, 
	data JSON NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (event_id), 
	FOREIGN KEY(task_id) REFERENCES tasks (task_id)
);

CREATE INDEX ix_task_events_task_id ON task_events (task_id);

CREATE TABLE messages (
	message_id INTEGER NOT NULL, 
	from_agent VARCHAR(128) NOT NULL, 
	"to" VARCHAR(128), 
	room_id VARCHAR(128), 
	subject VARCHAR(200), 
	text TEXT NOT NULL, 
	payload JSON NOT NULL, 
	reply_to BIGINT, 
	reply_to_notification BIGINT, 
	status VARCHAR(32) NOT NULL, 
	created_at DATETIME NOT NULL, 
	delivered_at DATETIME, 
	acked_at DATETIME, delivery_count INTEGER DEFAULT '0' NOT NULL, thread_id BIGINT, traceparent VARCHAR(55), 
	PRIMARY KEY (message_id), 
	FOREIGN KEY(room_id) REFERENCES rooms (room_id), 
	FOREIGN KEY("to") REFERENCES agents (agent_id)
);

CREATE TABLE room_members (
	member_id INTEGER NOT NULL, 
	room_id VARCHAR(128) NOT NULL, 
	agent_id VARCHAR(128) NOT NULL, 
	joined_at DATETIME NOT NULL, 
	PRIMARY KEY (member_id), 
	FOREIGN KEY(agent_id) REFERENCES agents (agent_id), 
	FOREIGN KEY(room_id) REFERENCES rooms (room_id), 
	CONSTRAINT uq_room_members_room_agent UNIQUE (room_id, agent_id)
);

CREATE TABLE events (
	event_id INTEGER NOT NULL, 
	kind VARCHAR(200) NOT NULL, 
	audience VARCHAR(128) NOT NULL, 
	subject_id VARCHAR(128) NOT NULL, 
	data JSON NOT NULL, 
	created_at DATETIME NOT NULL, traceparent VARCHAR(55), 
	PRIMARY KEY (event_id)
);

CREATE INDEX ix_events_audience ON events (audience, event_id);

CREATE TABLE bridge_offsets (
	bridge VARCHAR(32) NOT NULL, 
	last_update_id BIGINT NOT NULL, 
	updated_at DATETIME NOT NULL, cursor TEXT, 
	PRIMARY KEY (bridge)
);

CREATE INDEX ix_messages_inbox ON messages ("to", status, message_id) WHERE "to" IS NOT NULL;

CREATE INDEX ix_messages_room ON messages (room_id, message_id) WHERE "room_id" IS NOT NULL;

CREATE INDEX ix_enrollments_status_created ON enrollments (status, created_at);

CREATE INDEX ix_messages_notification_reply ON messages (reply_to_notification) WHERE "reply_to_notification" IS NOT NULL;

CREATE TABLE "idempotency_keys" (
	record_id INTEGER NOT NULL, 
	scope VARCHAR(128) NOT NULL, 
	key_hash VARCHAR(64) NOT NULL, 
	fingerprint VARCHAR(64) NOT NULL, 
	sealed_body TEXT NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (record_id), 
	CONSTRAINT uq_idempotency_keys_scope_key_hash UNIQUE (scope, key_hash)
);

CREATE INDEX ix_idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE posts (
	post_id INTEGER NOT NULL, 
	subject VARCHAR(32) NOT NULL, 
	subject_id BIGINT NOT NULL, 
	bridge VARCHAR(32) NOT NULL, 
	platform_message_id VARCHAR(200), 
	status VARCHAR(32) NOT NULL, 
	error TEXT, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (post_id)
);

CREATE INDEX ix_posts_subject ON posts (subject, subject_id);

CREATE INDEX ix_posts_platform ON posts (bridge, platform_message_id);

CREATE TABLE room_threads (
	thread_key INTEGER NOT NULL, 
	room_id VARCHAR(128) NOT NULL, 
	bridge VARCHAR(32) NOT NULL, 
	platform_thread_id VARCHAR(200) NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (thread_key)
);

CREATE UNIQUE INDEX ix_room_threads_room ON room_threads (room_id, bridge);

CREATE TABLE "interventions" (
	intervention_id VARCHAR(128) NOT NULL, 
	status VARCHAR(32) NOT NULL, 
	title VARCHAR(500), 
	risk VARCHAR(32), 
	proposed_action TEXT, 
	approval_id BIGINT, 
	approval_status VARCHAR(32) NOT NULL, 
	created_by VARCHAR(128) NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	participants JSON DEFAULT '[]' NOT NULL, 
	PRIMARY KEY (intervention_id)
);

CREATE INDEX ix_interventions_created ON interventions (created_at);

CREATE TABLE "approvals" (
	approval_id INTEGER NOT NULL, 
	kind VARCHAR(32) NOT NULL, 
	status VARCHAR(32) NOT NULL, 
	title VARCHAR(500) NOT NULL, 
	detail TEXT, 
	requested_by VARCHAR(128) NOT NULL, 
	subject_id VARCHAR(128) NOT NULL, 
	created_at DATETIME NOT NULL, 
	decided_at DATETIME, 
	decided_by VARCHAR(200), 
	note TEXT, 
	platform_message_id VARCHAR(200), 
	payload JSON, 
	audience VARCHAR(128) DEFAULT '*' NOT NULL, 
	expires_at DATETIME, approved_payload JSON, remembered_policy_id INTEGER, interrupt BOOLEAN DEFAULT 0 NOT NULL, options JSON, multiple BOOLEAN DEFAULT 0 NOT NULL, allow_other BOOLEAN DEFAULT 0 NOT NULL, answer JSON, remind_at DATETIME, reminded_at DATETIME, escalate_at DATETIME, escalated_to VARCHAR(32), task_id INTEGER, traceparent VARCHAR(55), 
	PRIMARY KEY (approval_id)
);

CREATE INDEX ix_approvals_status ON approvals (status);

CREATE INDEX ix_approvals_audience ON approvals (audience, approval_id);

CREATE INDEX ix_approvals_due ON approvals (expires_at) WHERE status = 'pending' AND expires_at IS NOT NULL;

CREATE TABLE policies (
	policy_id INTEGER NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	decision VARCHAR(32) NOT NULL, 
	note TEXT, 
	priority INTEGER NOT NULL, 
	enabled BOOLEAN NOT NULL, 
	"match" JSON NOT NULL, 
	"limit" JSON, 
	version INTEGER NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, answer JSON, remind_after INTEGER, escalate_after INTEGER, 
	PRIMARY KEY (policy_id)
);

CREATE INDEX ix_policies_enabled ON policies (enabled);

CREATE TABLE policy_versions (
	version_key INTEGER NOT NULL, 
	policy_id INTEGER NOT NULL, 
	version INTEGER NOT NULL, 
	policy JSON NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (version_key), 
	FOREIGN KEY(policy_id) REFERENCES policies (policy_id)
);

CREATE UNIQUE INDEX ix_policy_versions_policy ON policy_versions (policy_id, version);

CREATE TABLE policy_uses (
	use_id INTEGER NOT NULL, 
	policy_id INTEGER NOT NULL, 
	agent_id VARCHAR(128) NOT NULL, 
	approval_id INTEGER NOT NULL, 
	decided_at DATETIME NOT NULL, 
	PRIMARY KEY (use_id)
);

CREATE INDEX ix_policy_uses_window ON policy_uses (policy_id, agent_id, decided_at);

CREATE INDEX ix_messages_thread ON messages (thread_id, message_id);

CREATE TRIGGER messages_thread_of_a_first_message AFTER INSERT ON messages
WHEN NEW.thread_id IS NULL
BEGIN
    UPDATE messages SET thread_id = NEW.message_id WHERE message_id = NEW.message_id;
END;

CREATE TABLE webhooks (
	webhook_id INTEGER NOT NULL, 
	url VARCHAR(2000) NOT NULL, 
	events JSON NOT NULL, 
	description TEXT, 
	enabled BOOLEAN NOT NULL, 
	disabled_reason TEXT, 
	sealed_secret TEXT NOT NULL, 
	sealed_previous TEXT, 
	previous_until DATETIME, 
	after_event_id BIGINT NOT NULL, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, task_id INTEGER, a2a_push JSON, 
	PRIMARY KEY (webhook_id)
);

CREATE TABLE webhook_deliveries (
	delivery_id INTEGER NOT NULL, 
	webhook_id INTEGER NOT NULL, 
	event_id BIGINT NOT NULL, 
	event_type VARCHAR(200) NOT NULL, 
	message_id VARCHAR(128) NOT NULL, 
	body TEXT NOT NULL, 
	attempts INTEGER NOT NULL, 
	status VARCHAR(32) NOT NULL, 
	last_status_code INTEGER, 
	last_error TEXT, 
	next_attempt_at DATETIME, 
	created_at DATETIME NOT NULL, traceparent VARCHAR(55), 
	PRIMARY KEY (delivery_id), 
	FOREIGN KEY(webhook_id) REFERENCES webhooks (webhook_id)
);

CREATE INDEX ix_webhook_deliveries_webhook ON webhook_deliveries (webhook_id, delivery_id);

CREATE INDEX ix_webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE "next_attempt_at" IS NOT NULL;

CREATE TABLE search_queue (key INTEGER PRIMARY KEY, kind TEXT NOT NULL, ref_id INTEGER NOT NULL, title TEXT, body TEXT NOT NULL, from_agent TEXT, to_agent TEXT, room_id TEXT, audience TEXT, created_at TEXT NOT NULL, replaces INTEGER NOT NULL);

CREATE TRIGGER search_messages AFTER INSERT ON messages BEGIN INSERT OR REPLACE INTO search_queue (key, kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at, replaces) SELECT NEW.message_id * 8 + 1, CASE WHEN NEW.room_id IS NULL THEN 'message' ELSE 'room_post' END, NEW.message_id, NEW.subject, NEW.text, NEW.from_agent, NEW."to", NEW.room_id, NULL, NEW.created_at, 0; END;

CREATE TRIGGER search_approvals AFTER INSERT ON approvals BEGIN INSERT OR REPLACE INTO search_queue (key, kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at, replaces) SELECT NEW.approval_id * 8 + 3, 'approval', NEW.approval_id, NEW.title, coalesce(NEW.detail, ''), NEW.requested_by, NULL, NULL, NEW.audience, NEW.created_at, 0; END;

CREATE TRIGGER search_approvals_changed AFTER UPDATE OF title, detail, audience ON approvals BEGIN INSERT OR REPLACE INTO search_queue (key, kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at, replaces) SELECT NEW.approval_id * 8 + 3, 'approval', NEW.approval_id, NEW.title, coalesce(NEW.detail, ''), NEW.requested_by, NULL, NULL, NEW.audience, NEW.created_at, 1; END;

CREATE TRIGGER search_actions AFTER INSERT ON actions BEGIN INSERT OR REPLACE INTO search_queue (key, kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at, replaces) SELECT NEW.action_id * 8 + 4, 'action', NEW.action_id, NEW.action, coalesce(NEW.target, '') || ' ' || coalesce(NEW.outcome, '') || ' ' || coalesce((SELECT group_concat(value, ' ') FROM json_tree(NEW.params) WHERE type = 'text'), ''), NEW.agent_id, NULL, NULL, NULL, NEW.created_at, 0; END;

CREATE INDEX ix_webhook_deliveries_age ON webhook_deliveries (status, created_at);

CREATE TRIGGER search_task_events AFTER INSERT ON task_events WHEN NEW.message IS NOT NULL AND NEW.kind NOT IN ('claimed', 'lease_expired') BEGIN INSERT OR REPLACE INTO search_queue (key, kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at, replaces) SELECT tasks.task_id * 8 + 2, 'task', tasks.task_id, tasks.title, coalesce(tasks.description, '') || ' ' || coalesce((SELECT group_concat(value, ' ') FROM json_tree(tasks.payload) WHERE type = 'text'), '') || ' ' || coalesce((SELECT group_concat(value, ' ') FROM json_tree(tasks.result) WHERE type = 'text'), '') || ' ' || coalesce((SELECT group_concat(e.message, ' ') FROM task_events e WHERE e.task_id = tasks.task_id AND e.kind NOT IN ('claimed', 'lease_expired')), ''), tasks.created_by, NULL, tasks.room_id, '*', tasks.created_at, 1 FROM tasks WHERE tasks.task_id = NEW.task_id; END;

CREATE TABLE stream_tickets (
	ticket_hash VARCHAR(64) NOT NULL, 
	kind VARCHAR(32) NOT NULL, 
	agent_id VARCHAR(128), 
	token_hash VARCHAR(64), 
	expires_at DATETIME NOT NULL, 
	PRIMARY KEY (ticket_hash)
);

CREATE INDEX ix_stream_tickets_expires ON stream_tickets (expires_at);

CREATE VIRTUAL TABLE "search_index" USING fts5(title, body, kind UNINDEXED, ref_id UNINDEXED, from_agent UNINDEXED, to_agent UNINDEXED, room_id UNINDEXED, audience UNINDEXED, created_at UNINDEXED, readers, tokenize = 'unicode61');

CREATE INDEX ix_approvals_to_remind ON approvals (remind_at) WHERE status = 'pending' AND reminded_at IS NULL AND remind_at IS NOT NULL;

CREATE INDEX ix_approvals_to_escalate ON approvals (escalate_at) WHERE status = 'pending' AND escalate_at IS NOT NULL;

CREATE TABLE reservations (
	reservation_id INTEGER NOT NULL, 
	workspace VARCHAR(200) NOT NULL, 
	paths JSON NOT NULL, 
	"exclusive" BOOLEAN NOT NULL, 
	holder VARCHAR(128) NOT NULL, 
	reason VARCHAR(500), 
	task_id INTEGER, 
	status VARCHAR(16) NOT NULL, 
	created_at DATETIME NOT NULL, 
	expires_at DATETIME NOT NULL, 
	ended_at DATETIME, 
	PRIMARY KEY (reservation_id)
);

CREATE INDEX ix_reservations_workspace ON reservations (workspace, status, reservation_id);

CREATE INDEX ix_reservations_holder ON reservations (holder, reservation_id);

CREATE INDEX ix_reservations_due ON reservations (expires_at) WHERE status = 'active';

CREATE INDEX ix_reservations_task ON reservations (task_id) WHERE status = 'active' AND task_id IS NOT NULL;

CREATE TABLE a2a_tasks (
	task_id INTEGER NOT NULL, 
	agent_id VARCHAR(128) NOT NULL, 
	caller VARCHAR(128) NOT NULL, 
	context_id VARCHAR(200) NOT NULL, 
	message_id VARCHAR(200) NOT NULL, 
	created_at DATETIME NOT NULL, 
	PRIMARY KEY (task_id), 
	CONSTRAINT uq_a2a_tasks_message UNIQUE (caller, agent_id, message_id)
);

CREATE INDEX ix_a2a_tasks_caller ON a2a_tasks (caller, agent_id, context_id);

CREATE INDEX ix_approvals_pending_task ON approvals (task_id) WHERE status = 'pending' AND task_id IS NOT NULL;

CREATE INDEX ix_webhooks_task ON webhooks (task_id, webhook_id) WHERE task_id IS NOT NULL;

CREATE TABLE a2a_calls (
	call_id INTEGER NOT NULL, 
	agent_id VARCHAR(128) NOT NULL, 
	url VARCHAR(2000) NOT NULL, 
	status VARCHAR(24) NOT NULL, 
	approval_id INTEGER, 
	remote_name VARCHAR(500), 
	endpoint VARCHAR(2000), 
	message JSON NOT NULL, 
	remote_task_id VARCHAR(200), 
	context_id VARCHAR(200), 
	state VARCHAR(40), 
	answer JSON, 
	error TEXT, 
	bearer_sealed TEXT, 
	followed_until DATETIME, 
	due_at DATETIME, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	PRIMARY KEY (call_id)
);

CREATE INDEX ix_a2a_calls_agent ON a2a_calls (agent_id, call_id);

CREATE INDEX ix_a2a_calls_due ON a2a_calls (due_at) WHERE due_at IS NOT NULL;

CREATE INDEX ix_a2a_calls_awaiting ON a2a_calls (approval_id) WHERE status = 'awaiting_approval';

CREATE TABLE "tasks" (
    task_id INTEGER NOT NULL,
    title VARCHAR(500) NOT NULL,
    description TEXT,
    payload JSON NOT NULL,
    priority INTEGER NOT NULL,
    assignee VARCHAR(128),
    room_id VARCHAR(128),
    status VARCHAR(32) NOT NULL,
    created_by VARCHAR(128) NOT NULL,
    claimed_by VARCHAR(128),
    claimed_at DATETIME,
    lease_expires_at DATETIME,
    lease_seconds INTEGER,
    attempts INTEGER NOT NULL,
    max_attempts INTEGER NOT NULL,
    progress INTEGER,
    result JSON,
    error TEXT,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    finished_at DATETIME,
    traceparent VARCHAR(55),
    encoded TEXT GENERATED ALWAYS AS (json_object('task_id', task_id, 'title', title, 'description', description, 'payload', json(payload), 'priority', priority, 'assignee', assignee, 'room_id', room_id, 'status', status, 'created_by', created_by, 'claimed_by', claimed_by, 'claimed_at', replace(iif(substr(claimed_at, 20) = '.000000', substr(claimed_at, 1, 19), claimed_at), ' ', 'T') || 'Z', 'lease_expires_at', replace(iif(substr(lease_expires_at, 20) = '.000000', substr(lease_expires_at, 1, 19), lease_expires_at), ' ', 'T') || 'Z', 'lease_seconds', lease_seconds, 'attempts', attempts, 'max_attempts', max_attempts, 'progress', progress, 'result', json(result), 'error', error, 'created_at', replace(iif(substr(created_at, 20) = '.000000', substr(created_at, 1, 19), created_at), ' ', 'T') || 'Z', 'updated_at', replace(iif(substr(updated_at, 20) = '.000000', substr(updated_at, 1, 19), updated_at), ' ', 'T') || 'Z', 'finished_at', replace(iif(substr(finished_at, 20) = '.000000', substr(finished_at, 1, 19), finished_at), ' ', 'T') || 'Z', 'traceparent', traceparent)) STORED,
    PRIMARY KEY (task_id)
);

CREATE INDEX ix_tasks_status_lease ON tasks (status, lease_expires_at);

CREATE INDEX ix_tasks_status_id ON tasks (status, task_id);

CREATE TRIGGER search_tasks AFTER INSERT ON tasks BEGIN INSERT OR REPLACE INTO search_queue (key, kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at, replaces) SELECT NEW.task_id * 8 + 2, 'task', NEW.task_id, NEW.title, coalesce(NEW.description, '') || ' ' || coalesce((SELECT group_concat(value, ' ') FROM json_tree(NEW.payload) WHERE type = 'text'), '') || ' ' || coalesce((SELECT group_concat(value, ' ') FROM json_tree(NEW.result) WHERE type = 'text'), '') || ' ' || coalesce((SELECT group_concat(e.message, ' ') FROM task_events e WHERE e.task_id = NEW.task_id AND e.kind NOT IN ('claimed', 'lease_expired')), ''), NEW.created_by, NULL, NEW.room_id, '*', NEW.created_at, 0; END;

CREATE TRIGGER search_tasks_changed AFTER UPDATE OF title, description, payload, result ON tasks BEGIN INSERT OR REPLACE INTO search_queue (key, kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at, replaces) SELECT NEW.task_id * 8 + 2, 'task', NEW.task_id, NEW.title, coalesce(NEW.description, '') || ' ' || coalesce((SELECT group_concat(value, ' ') FROM json_tree(NEW.payload) WHERE type = 'text'), '') || ' ' || coalesce((SELECT group_concat(value, ' ') FROM json_tree(NEW.result) WHERE type = 'text'), '') || ' ' || coalesce((SELECT group_concat(e.message, ' ') FROM task_events e WHERE e.task_id = NEW.task_id AND e.kind NOT IN ('claimed', 'lease_expired')), ''), NEW.created_by, NULL, NEW.room_id, '*', NEW.created_at, 1; END;

CREATE VIEW actions_encoded AS SELECT *, json_object(

    'action_id', action_id, 'agent_id', agent_id, 'action', action, 'target', target,
    'params', json(params), 'outcome', outcome, 'task_id', task_id,
    'created_at', replace(created_at, ' ', 'T') || 'Z'
) AS encoded FROM actions;

CREATE VIEW enrollments_encoded AS SELECT *, json_object(

    'enroll_id', enroll_id, 'agent_id', agent_id, 'name', name, 'kind', kind,
    'capabilities', json(capabilities), 'metadata', json(metadata), 'reason', reason,
    'status', status, 'approval_id', approval_id, 'token_delivered', token_delivered,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'decided_at', replace(decided_at, ' ', 'T') || 'Z', 'claim_hash', claim_hash
) AS encoded FROM enrollments;

CREATE VIEW interventions_encoded AS SELECT *, json_object(

    'intervention_id', intervention_id, 'status', status, 'title', title, 'risk', risk,
    'proposed_action', proposed_action, 'approval_id', approval_id,
    'approval_status', approval_status, 'created_by', created_by,
    'participants', json(participants), 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'updated_at', replace(updated_at, ' ', 'T') || 'Z'
) AS encoded FROM interventions;

CREATE VIEW room_threads_encoded AS SELECT *, json_object(

    'thread_key', thread_key, 'room_id', room_id, 'bridge', bridge,
    'platform_thread_id', platform_thread_id, 'created_at', replace(created_at, ' ', 'T') || 'Z'
) AS encoded FROM room_threads;

CREATE VIEW rooms_encoded AS SELECT *, json_object(

    'room_id', room_id, 'name', name, 'topic', topic, 'space_id', space_id,
    'created_by', created_by, 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'platform_thread_id', platform_thread_id
) AS encoded FROM rooms;

CREATE VIEW spaces_encoded AS SELECT *, json_object(

    'space_id', space_id, 'name', name, 'description', description, 'status', status,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'archived_at', replace(archived_at, ' ', 'T') || 'Z'
) AS encoded FROM spaces;

CREATE VIEW policies_encoded AS SELECT *, json_object(
    'policy_id', policy_id, 'name', name, 'decision', decision, 'note', note,
    'priority', priority, 'enabled', enabled, 'match', json(match), 'limit', json("limit"),
    'version', version, 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'updated_at', replace(updated_at, ' ', 'T') || 'Z',
    'answer', json(answer), 'remind_after', remind_after, 'escalate_after', escalate_after) AS encoded FROM policies;

CREATE VIEW reservations_encoded AS SELECT *, json_object(
    'reservation_id', reservation_id, 'workspace', workspace, 'paths', json(paths),
    'exclusive', exclusive, 'holder', holder, 'reason', reason, 'task_id', task_id,
    'status', status, 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'expires_at', replace(expires_at, ' ', 'T') || 'Z',
    'ended_at', replace(ended_at, ' ', 'T') || 'Z') AS encoded FROM reservations;

CREATE VIEW agents_encoded AS SELECT *, json_object(

    'agent_id', agent_id, 'name', name, 'kind', kind,
    'capabilities', json(capabilities), 'metadata', json(metadata), 'status', status,
    'note', note, 'last_seen_at', replace(last_seen_at, ' ', 'T') || 'Z',
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'updated_at', replace(updated_at, ' ', 'T') || 'Z', 'token_hash', token_hash, 'a2a', json(a2a)
) AS encoded FROM agents;

CREATE VIEW webhooks_encoded AS SELECT *, json_object(
    'webhook_id', webhook_id, 'url', url, 'events', json(events), 'description', description,
    'enabled', enabled, 'disabled_reason', disabled_reason, 'sealed_secret', sealed_secret,
    'sealed_previous', sealed_previous,
    'previous_until', replace(previous_until, ' ', 'T') || 'Z',
    'after_event_id', after_event_id, 'created_at', replace(created_at, ' ', 'T') || 'Z',
    'updated_at', replace(updated_at, ' ', 'T') || 'Z', 'task_id', task_id, 'a2a_push', json(a2a_push)) AS encoded FROM webhooks;

CREATE VIEW a2a_calls_encoded AS SELECT *, json_object(
    'call_id', call_id, 'agent_id', agent_id, 'url', url, 'status', status,
    'approval_id', approval_id, 'remote_name', remote_name, 'endpoint', endpoint,
    'message', json(message), 'remote_task_id', remote_task_id, 'context_id', context_id,
    'state', state, 'answer', json(answer), 'error', error,
    'followed_until', replace(followed_until, ' ', 'T') || 'Z',
    'due_at', replace(due_at, ' ', 'T') || 'Z',
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'updated_at', replace(updated_at, ' ', 'T') || 'Z') AS encoded FROM a2a_calls;

CREATE VIEW messages_encoded AS
SELECT message_id, "to", status, room_id, thread_id, reply_to_notification,
    json_object('message_id', message_id, 'from_agent', from_agent, 'to', "to", 'room_id', room_id, 'subject', subject, 'text', text, 'payload', json(payload), 'reply_to', reply_to, 'thread_id', thread_id, 'reply_to_notification', reply_to_notification, 'status', status, 'created_at', replace(iif(substr(created_at, 20) = '.000000', substr(created_at, 1, 19), created_at), ' ', 'T') || 'Z', 'delivered_at', replace(iif(substr(delivered_at, 20) = '.000000', substr(delivered_at, 1, 19), delivered_at), ' ', 'T') || 'Z', 'acked_at', replace(iif(substr(acked_at, 20) = '.000000', substr(acked_at, 1, 19), acked_at), ' ', 'T') || 'Z', 'delivery_count', delivery_count, 'traceparent', traceparent) AS encoded
FROM messages;

CREATE VIEW approvals_encoded AS SELECT *, json_object(
    'approval_id', approval_id, 'kind', kind, 'status', status, 'title', title,
    'detail', detail, 'payload', json(payload), 'approved_payload', json(approved_payload),
    'requested_by', requested_by, 'subject_id', subject_id, 'audience', audience,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'expires_at', replace(expires_at, ' ', 'T') || 'Z',
    'decided_at', replace(decided_at, ' ', 'T') || 'Z',
    'decided_by', decided_by, 'note', note, 'platform_message_id', platform_message_id,
    'remembered_policy_id', remembered_policy_id, 'interrupt', interrupt,
    'options', json(options), 'multiple', multiple, 'allow_other', allow_other,
    'answer', json(answer), 'remind_at', replace(remind_at, ' ', 'T') || 'Z',
    'reminded_at', replace(reminded_at, ' ', 'T') || 'Z',
    'escalate_at', replace(escalate_at, ' ', 'T') || 'Z', 'escalated_to', escalated_to,
    'task_id', task_id, 'traceparent', traceparent) AS encoded FROM approvals;

CREATE VIEW a2a_tasks_shown AS
SELECT a.task_id, a.agent_id, a.caller, a.context_id, a.message_id, t.status, t.updated_at,
       t.encoded AS task,
       (SELECT json_object(
            'event_id', e.event_id, 'task_id', e.task_id, 'agent_id', e.agent_id,
            'kind', e.kind, 'message', e.message, 'progress', e.progress, 'data', json(e.data),
            'created_at', replace(e.created_at, ' ', 'T') || 'Z')
        FROM task_events e
        WHERE e.task_id = a.task_id AND e.kind IN ('message', 'input_required')
        ORDER BY e.event_id DESC LIMIT 1) AS latest_note,
       (SELECT p.encoded FROM approvals_encoded p
        WHERE p.task_id = a.task_id AND p.status = 'pending'
        ORDER BY p.approval_id DESC LIMIT 1) AS waiting_on
FROM a2a_tasks a JOIN tasks t ON t.task_id = a.task_id;

CREATE VIEW notifications_encoded AS SELECT *, json_object(
    'notification_id', notification_id, 'agent_id', agent_id, 'text', text, 'bridge', bridge,
    'platform_message_id', platform_message_id, 'status', status, 'error', error,
    'created_at', replace(created_at, ' ', 'T') || 'Z',
    'sent_at', replace(sent_at, ' ', 'T') || 'Z', 'traceparent', traceparent) AS encoded FROM notifications;

CREATE VIEW webhook_deliveries_encoded AS SELECT *, json_object(
    'delivery_id', delivery_id, 'webhook_id', webhook_id, 'event_id', event_id,
    'event_type', event_type, 'message_id', message_id, 'body', body, 'attempts', attempts,
    'status', status, 'last_status_code', last_status_code, 'last_error', last_error,
    'next_attempt_at', replace(next_attempt_at, ' ', 'T') || 'Z',
    'created_at', replace(created_at, ' ', 'T') || 'Z', 'traceparent', traceparent) AS encoded FROM webhook_deliveries;

INSERT INTO search_index (search_index, rank) VALUES ('automerge', 16);

INSERT INTO search_index (search_index, rank) VALUES ('crisismerge', 64);
