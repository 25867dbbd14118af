-- Relay's schema on PostgreSQL, as the first revision (0043, versions/0043_baseline.py)
-- creates it. A later change to the schema is a revision of its own on top of it.

CREATE FUNCTION messages_thread_of_a_first_message() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.thread_id IS NULL THEN
        NEW.thread_id := NEW.message_id;
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION search_actions() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN INSERT INTO search_docs (key, kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at) SELECT NEW.action_id * 8 + 4, 'action', NEW.action_id, NEW.action, coalesce(NEW.target, '') || ' ' || coalesce(NEW.outcome, '') || ' ' || search_json_strings(NEW.params), NEW.agent_id, NULL, NULL, NULL, NEW.created_at ON CONFLICT (key) DO UPDATE SET title = EXCLUDED.title, body = EXCLUDED.body, audience = EXCLUDED.audience; RETURN NULL; END $$;

CREATE FUNCTION search_approvals() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN INSERT INTO search_docs (key, kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at) SELECT NEW.approval_id * 8 + 3, 'approval', NEW.approval_id, NEW.title, coalesce(NEW.detail, ''), NEW.requested_by, NULL, NULL, NEW.audience, NEW.created_at ON CONFLICT (key) DO UPDATE SET title = EXCLUDED.title, body = EXCLUDED.body, audience = EXCLUDED.audience; RETURN NULL; END $$;

CREATE FUNCTION search_json_strings(value jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $_$ SELECT coalesce(string_agg(s #>> '{}', ' '), '') FROM jsonb_path_query(value, 'strict $.**') AS s WHERE jsonb_typeof(s) = 'string' $_$;

CREATE FUNCTION search_messages() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN INSERT INTO search_docs (key, kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at) SELECT NEW.message_id * 8 + 1, CASE WHEN NEW.room_id IS NULL THEN 'message' ELSE 'room_post' END, NEW.message_id, NEW.subject, NEW.text, NEW.from_agent, NEW."to", NEW.room_id, NULL, NEW.created_at ON CONFLICT (key) DO UPDATE SET title = EXCLUDED.title, body = EXCLUDED.body, audience = EXCLUDED.audience; RETURN NULL; END $$;

CREATE FUNCTION search_task_events() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN UPDATE search_docs SET body = body || ' ' || NEW.message WHERE key = NEW.task_id * 8 + 2; RETURN NULL; END $$;

CREATE FUNCTION search_tasks() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN INSERT INTO search_docs (key, kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at) SELECT NEW.task_id * 8 + 2, 'task', NEW.task_id, NEW.title, coalesce(NEW.description, '') || ' ' || search_json_strings(NEW.payload) || ' ' || search_json_strings(NEW.result) || ' ' || coalesce((SELECT string_agg(e.message, ' ' ORDER BY e.event_id) FROM task_events e WHERE e.task_id = NEW.task_id AND e.kind NOT IN ('claimed', 'lease_expired')), ''), NEW.created_by, NULL, NEW.room_id, '*', NEW.created_at ON CONFLICT (key) DO UPDATE SET title = EXCLUDED.title, body = EXCLUDED.body, audience = EXCLUDED.audience; RETURN NULL; END $$;

CREATE FUNCTION search_words(text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $_$ SELECT regexp_replace($1, '[^[:alnum:]]+', ' ', 'g') $_$;

CREATE TABLE a2a_calls (
    call_id bigint NOT NULL,
    agent_id character varying(128) NOT NULL,
    url character varying(2000) NOT NULL,
    status character varying(24) NOT NULL,
    approval_id bigint,
    remote_name character varying(500),
    endpoint character varying(2000),
    message jsonb NOT NULL,
    remote_task_id character varying(200),
    context_id character varying(200),
    state character varying(40),
    answer jsonb,
    error text,
    bearer_sealed text,
    followed_until timestamp with time zone,
    due_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);

CREATE SEQUENCE a2a_calls_call_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE a2a_calls_call_id_seq OWNED BY a2a_calls.call_id;

CREATE TABLE a2a_tasks (
    task_id bigint NOT NULL,
    agent_id character varying(128) NOT NULL,
    caller character varying(128) NOT NULL,
    context_id character varying(200) NOT NULL,
    message_id character varying(200) NOT NULL,
    created_at timestamp with time zone NOT NULL
);

CREATE SEQUENCE a2a_tasks_task_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE a2a_tasks_task_id_seq OWNED BY a2a_tasks.task_id;

CREATE TABLE actions (
    action_id bigint NOT NULL,
    agent_id character varying(128) NOT NULL,
    action character varying(200) NOT NULL,
    target character varying(1000),
    params jsonb NOT NULL,
    outcome text,
    task_id bigint,
    created_at timestamp with time zone NOT NULL
);

CREATE SEQUENCE actions_action_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE actions_action_id_seq OWNED BY actions.action_id;

CREATE TABLE agents (
    agent_id character varying(128) NOT NULL,
    name character varying(200),
    kind character varying(200),
    capabilities jsonb NOT NULL,
    metadata jsonb NOT NULL,
    status character varying(200),
    note text,
    last_seen_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    token_hash character varying(64),
    a2a jsonb
);

CREATE TABLE approvals (
    approval_id bigint NOT NULL,
    kind character varying(32) NOT NULL,
    status character varying(32) NOT NULL,
    title character varying(500) NOT NULL,
    detail text,
    requested_by character varying(128) NOT NULL,
    subject_id character varying(128) NOT NULL,
    created_at timestamp with time zone NOT NULL,
    decided_at timestamp with time zone,
    decided_by character varying(200),
    note text,
    platform_message_id character varying(200),
    payload jsonb,
    audience character varying(128) DEFAULT '*'::character varying NOT NULL,
    expires_at timestamp with time zone,
    approved_payload jsonb,
    remembered_policy_id integer,
    interrupt boolean DEFAULT false NOT NULL,
    options jsonb,
    multiple boolean DEFAULT false NOT NULL,
    allow_other boolean DEFAULT false NOT NULL,
    answer jsonb,
    remind_at timestamp with time zone,
    reminded_at timestamp with time zone,
    escalate_at timestamp with time zone,
    escalated_to character varying(32),
    task_id bigint,
    traceparent character varying(55)
);

CREATE SEQUENCE approvals_approval_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE approvals_approval_id_seq OWNED BY approvals.approval_id;

CREATE TABLE bridge_offsets (
    bridge character varying(32) NOT NULL,
    last_update_id bigint NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    cursor text
);

CREATE TABLE diagnostics (
    diagnostic_id bigint NOT NULL,
    intervention_id character varying(128) NOT NULL,
    agent_id character varying(128) NOT NULL,
    summary character varying(2000) NOT NULL,
    content jsonb NOT NULL,
    content_type character varying(200),
    severity character varying(32) NOT NULL,
    created_at timestamp with time zone NOT NULL
);

CREATE SEQUENCE diagnostics_diagnostic_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE diagnostics_diagnostic_id_seq OWNED BY diagnostics.diagnostic_id;

CREATE TABLE enrollments (
    enroll_id bigint NOT NULL,
    agent_id character varying(128) NOT NULL,
    name character varying(200),
    capabilities jsonb NOT NULL,
    metadata jsonb NOT NULL,
    reason text,
    status character varying(32) NOT NULL,
    approval_id bigint,
    token_delivered boolean NOT NULL,
    created_at timestamp with time zone NOT NULL,
    decided_at timestamp with time zone,
    claim_hash character varying(64) NOT NULL,
    kind character varying(200)
);

CREATE SEQUENCE enrollments_enroll_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE enrollments_enroll_id_seq OWNED BY enrollments.enroll_id;

CREATE TABLE events (
    event_id bigint NOT NULL,
    kind character varying(200) NOT NULL,
    audience character varying(128) NOT NULL,
    subject_id character varying(128) NOT NULL,
    data jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL,
    traceparent character varying(55)
);

CREATE SEQUENCE events_event_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE events_event_id_seq OWNED BY events.event_id;

CREATE TABLE idempotency_keys (
    record_id bigint NOT NULL,
    scope character varying(128) NOT NULL,
    key_hash character varying(64) NOT NULL,
    fingerprint character varying(64) NOT NULL,
    sealed_body text NOT NULL,
    created_at timestamp with time zone NOT NULL
);

CREATE SEQUENCE idempotency_keys_record_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE idempotency_keys_record_id_seq OWNED BY idempotency_keys.record_id;

CREATE TABLE intervention_actions (
    action_id bigint NOT NULL,
    intervention_id character varying(128) NOT NULL,
    agent_id character varying(128) NOT NULL,
    action text NOT NULL,
    status character varying(32) NOT NULL,
    evidence_before jsonb NOT NULL,
    evidence_after jsonb NOT NULL,
    link character varying(2000),
    created_at timestamp with time zone NOT NULL
);

CREATE SEQUENCE intervention_actions_action_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE intervention_actions_action_id_seq OWNED BY intervention_actions.action_id;

CREATE TABLE interventions (
    intervention_id character varying(128) NOT NULL,
    status character varying(32) NOT NULL,
    title character varying(500),
    risk character varying(32),
    proposed_action text,
    approval_id bigint,
    approval_status character varying(32) NOT NULL,
    created_by character varying(128) NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    participants jsonb DEFAULT '[]'::jsonb NOT NULL
);

CREATE TABLE messages (
    message_id bigint NOT NULL,
    from_agent character varying(128) NOT NULL,
    "to" character varying(128),
    room_id character varying(128),
    subject character varying(200),
    text text NOT NULL,
    payload jsonb NOT NULL,
    reply_to bigint,
    reply_to_notification bigint,
    status character varying(32) NOT NULL,
    created_at timestamp with time zone NOT NULL,
    delivered_at timestamp with time zone,
    acked_at timestamp with time zone,
    delivery_count integer DEFAULT 0 NOT NULL,
    thread_id bigint,
    traceparent character varying(55)
);

CREATE SEQUENCE messages_message_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE messages_message_id_seq OWNED BY messages.message_id;

CREATE TABLE notifications (
    notification_id bigint NOT NULL,
    agent_id character varying(128),
    text text NOT NULL,
    bridge character varying(32) NOT NULL,
    platform_message_id character varying(200),
    status character varying(32) NOT NULL,
    error text,
    created_at timestamp with time zone NOT NULL,
    sent_at timestamp with time zone,
    traceparent character varying(55)
);

CREATE SEQUENCE notifications_notification_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE notifications_notification_id_seq OWNED BY notifications.notification_id;

CREATE TABLE policies (
    policy_id bigint NOT NULL,
    name character varying(200) NOT NULL,
    decision character varying(32) NOT NULL,
    note text,
    priority integer NOT NULL,
    enabled boolean NOT NULL,
    match jsonb NOT NULL,
    "limit" jsonb,
    version integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    answer jsonb,
    remind_after integer,
    escalate_after integer
);

CREATE SEQUENCE policies_policy_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE policies_policy_id_seq OWNED BY policies.policy_id;

CREATE TABLE policy_uses (
    use_id bigint NOT NULL,
    policy_id bigint NOT NULL,
    agent_id character varying(128) NOT NULL,
    approval_id bigint NOT NULL,
    decided_at timestamp with time zone NOT NULL
);

CREATE SEQUENCE policy_uses_use_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE policy_uses_use_id_seq OWNED BY policy_uses.use_id;

CREATE TABLE policy_versions (
    version_key bigint NOT NULL,
    policy_id bigint NOT NULL,
    version integer NOT NULL,
    policy jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL
);

CREATE SEQUENCE policy_versions_version_key_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE policy_versions_version_key_seq OWNED BY policy_versions.version_key;

CREATE TABLE posts (
    post_id bigint NOT NULL,
    subject character varying(32) NOT NULL,
    subject_id bigint NOT NULL,
    bridge character varying(32) NOT NULL,
    platform_message_id character varying(200),
    status character varying(32) NOT NULL,
    error text,
    created_at timestamp with time zone NOT NULL
);

CREATE SEQUENCE posts_post_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE posts_post_id_seq OWNED BY posts.post_id;

CREATE TABLE reservations (
    reservation_id bigint NOT NULL,
    workspace character varying(200) NOT NULL,
    paths jsonb NOT NULL,
    exclusive boolean NOT NULL,
    holder character varying(128) NOT NULL,
    reason character varying(500),
    task_id bigint,
    status character varying(16) NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    ended_at timestamp with time zone
);

CREATE SEQUENCE reservations_reservation_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE reservations_reservation_id_seq OWNED BY reservations.reservation_id;

CREATE TABLE room_members (
    member_id bigint NOT NULL,
    room_id character varying(128) NOT NULL,
    agent_id character varying(128) NOT NULL,
    joined_at timestamp with time zone NOT NULL
);

CREATE SEQUENCE room_members_member_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE room_members_member_id_seq OWNED BY room_members.member_id;

CREATE TABLE room_threads (
    thread_key bigint NOT NULL,
    room_id character varying(128) NOT NULL,
    bridge character varying(32) NOT NULL,
    platform_thread_id character varying(200) NOT NULL,
    created_at timestamp with time zone NOT NULL
);

CREATE SEQUENCE room_threads_thread_key_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE room_threads_thread_key_seq OWNED BY room_threads.thread_key;

CREATE TABLE rooms (
    room_id character varying(128) NOT NULL,
    name character varying(200) NOT NULL,
    topic text,
    space_id character varying(128),
    created_by character varying(128) NOT NULL,
    created_at timestamp with time zone NOT NULL,
    platform_thread_id character varying(200)
);

CREATE TABLE search_docs (
    key bigint NOT NULL,
    kind character varying(16) NOT NULL,
    ref_id bigint NOT NULL,
    title text,
    body text NOT NULL,
    from_agent character varying(128),
    to_agent character varying(128),
    room_id character varying(128),
    audience character varying(128),
    created_at timestamp with time zone NOT NULL,
    document tsvector GENERATED ALWAYS AS ((setweight(to_tsvector('simple'::regconfig, search_words(COALESCE(title, ''::text))), 'A'::"char") || setweight(to_tsvector('simple'::regconfig, search_words(body)), 'B'::"char"))) STORED,
    readers text[] GENERATED ALWAYS AS (array_remove(ARRAY[
CASE
    WHEN ((audience)::text = '*'::text) THEN '*'::text
    ELSE NULL::text
END,
CASE
    WHEN ((audience)::text <> '*'::text) THEN ('a:'::text || (audience)::text)
    ELSE NULL::text
END, ('a:'::text || (from_agent)::text), ('a:'::text || (to_agent)::text), ('r:'::text || (room_id)::text)], NULL::text)) STORED
);

CREATE TABLE spaces (
    space_id character varying(128) NOT NULL,
    name character varying(200) NOT NULL,
    description text,
    status character varying(32) NOT NULL,
    created_at timestamp with time zone NOT NULL,
    archived_at timestamp with time zone
);

CREATE TABLE stream_tickets (
    ticket_hash character varying(64) NOT NULL,
    kind character varying(32) NOT NULL,
    agent_id character varying(128),
    token_hash character varying(64),
    expires_at timestamp with time zone NOT NULL
);

CREATE TABLE task_events (
    event_id bigint NOT NULL,
    task_id bigint NOT NULL,
    agent_id character varying(128),
    kind character varying(200) NOT NULL,
    message text,
    progress integer,
    data jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL
);

CREATE SEQUENCE task_events_event_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE task_events_event_id_seq OWNED BY task_events.event_id;

CREATE TABLE tasks (
    task_id bigint NOT NULL,
    title character varying(500) NOT NULL,
    description text,
    payload jsonb NOT NULL,
    priority integer NOT NULL,
    assignee character varying(128),
    room_id character varying(128),
    status character varying(32) NOT NULL,
    created_by character varying(128) NOT NULL,
    claimed_by character varying(128),
    claimed_at timestamp with time zone,
    lease_expires_at timestamp with time zone,
    lease_seconds integer,
    attempts integer NOT NULL,
    max_attempts integer NOT NULL,
    progress integer,
    result jsonb,
    error text,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone,
    traceparent character varying(55)
);

CREATE SEQUENCE tasks_task_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE tasks_task_id_seq OWNED BY tasks.task_id;

CREATE TABLE webhook_deliveries (
    delivery_id bigint NOT NULL,
    webhook_id bigint NOT NULL,
    event_id bigint NOT NULL,
    event_type character varying(200) NOT NULL,
    message_id character varying(128) NOT NULL,
    body text NOT NULL,
    attempts integer NOT NULL,
    status character varying(32) NOT NULL,
    last_status_code integer,
    last_error text,
    next_attempt_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL,
    traceparent character varying(55)
);

CREATE SEQUENCE webhook_deliveries_delivery_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE webhook_deliveries_delivery_id_seq OWNED BY webhook_deliveries.delivery_id;

CREATE TABLE webhooks (
    webhook_id bigint NOT NULL,
    url character varying(2000) NOT NULL,
    events jsonb NOT NULL,
    description text,
    enabled boolean NOT NULL,
    disabled_reason text,
    sealed_secret text NOT NULL,
    sealed_previous text,
    previous_until timestamp with time zone,
    after_event_id bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    task_id bigint,
    a2a_push jsonb
);

CREATE SEQUENCE webhooks_webhook_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE webhooks_webhook_id_seq OWNED BY webhooks.webhook_id;

ALTER TABLE ONLY a2a_calls ALTER COLUMN call_id SET DEFAULT nextval('a2a_calls_call_id_seq'::regclass);

ALTER TABLE ONLY a2a_tasks ALTER COLUMN task_id SET DEFAULT nextval('a2a_tasks_task_id_seq'::regclass);

ALTER TABLE ONLY actions ALTER COLUMN action_id SET DEFAULT nextval('actions_action_id_seq'::regclass);

ALTER TABLE ONLY approvals ALTER COLUMN approval_id SET DEFAULT nextval('approvals_approval_id_seq'::regclass);

ALTER TABLE ONLY diagnostics ALTER COLUMN diagnostic_id SET DEFAULT nextval('diagnostics_diagnostic_id_seq'::regclass);

ALTER TABLE ONLY enrollments ALTER COLUMN enroll_id SET DEFAULT nextval('enrollments_enroll_id_seq'::regclass);

ALTER TABLE ONLY events ALTER COLUMN event_id SET DEFAULT nextval('events_event_id_seq'::regclass);

ALTER TABLE ONLY idempotency_keys ALTER COLUMN record_id SET DEFAULT nextval('idempotency_keys_record_id_seq'::regclass);

ALTER TABLE ONLY intervention_actions ALTER COLUMN action_id SET DEFAULT nextval('intervention_actions_action_id_seq'::regclass);

ALTER TABLE ONLY messages ALTER COLUMN message_id SET DEFAULT nextval('messages_message_id_seq'::regclass);

ALTER TABLE ONLY notifications ALTER COLUMN notification_id SET DEFAULT nextval('notifications_notification_id_seq'::regclass);

ALTER TABLE ONLY policies ALTER COLUMN policy_id SET DEFAULT nextval('policies_policy_id_seq'::regclass);

ALTER TABLE ONLY policy_uses ALTER COLUMN use_id SET DEFAULT nextval('policy_uses_use_id_seq'::regclass);

ALTER TABLE ONLY policy_versions ALTER COLUMN version_key SET DEFAULT nextval('policy_versions_version_key_seq'::regclass);

ALTER TABLE ONLY posts ALTER COLUMN post_id SET DEFAULT nextval('posts_post_id_seq'::regclass);

ALTER TABLE ONLY reservations ALTER COLUMN reservation_id SET DEFAULT nextval('reservations_reservation_id_seq'::regclass);

ALTER TABLE ONLY room_members ALTER COLUMN member_id SET DEFAULT nextval('room_members_member_id_seq'::regclass);

ALTER TABLE ONLY room_threads ALTER COLUMN thread_key SET DEFAULT nextval('room_threads_thread_key_seq'::regclass);

ALTER TABLE ONLY task_events ALTER COLUMN event_id SET DEFAULT nextval('task_events_event_id_seq'::regclass);

ALTER TABLE ONLY tasks ALTER COLUMN task_id SET DEFAULT nextval('tasks_task_id_seq'::regclass);

ALTER TABLE ONLY webhook_deliveries ALTER COLUMN delivery_id SET DEFAULT nextval('webhook_deliveries_delivery_id_seq'::regclass);

ALTER TABLE ONLY webhooks ALTER COLUMN webhook_id SET DEFAULT nextval('webhooks_webhook_id_seq'::regclass);

ALTER TABLE ONLY a2a_calls
    ADD CONSTRAINT a2a_calls_pkey PRIMARY KEY (call_id);

ALTER TABLE ONLY a2a_tasks
    ADD CONSTRAINT a2a_tasks_pkey PRIMARY KEY (task_id);

ALTER TABLE ONLY actions
    ADD CONSTRAINT actions_pkey PRIMARY KEY (action_id);

ALTER TABLE ONLY agents
    ADD CONSTRAINT agents_pkey PRIMARY KEY (agent_id);

ALTER TABLE ONLY agents
    ADD CONSTRAINT agents_token_hash_key UNIQUE (token_hash);

ALTER TABLE ONLY approvals
    ADD CONSTRAINT approvals_pkey PRIMARY KEY (approval_id);

ALTER TABLE ONLY bridge_offsets
    ADD CONSTRAINT bridge_offsets_pkey PRIMARY KEY (bridge);

ALTER TABLE ONLY diagnostics
    ADD CONSTRAINT diagnostics_pkey PRIMARY KEY (diagnostic_id);

ALTER TABLE ONLY enrollments
    ADD CONSTRAINT enrollments_pkey PRIMARY KEY (enroll_id);

ALTER TABLE ONLY events
    ADD CONSTRAINT events_pkey PRIMARY KEY (event_id);

ALTER TABLE ONLY idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (record_id);

ALTER TABLE ONLY intervention_actions
    ADD CONSTRAINT intervention_actions_pkey PRIMARY KEY (action_id);

ALTER TABLE ONLY interventions
    ADD CONSTRAINT interventions_pkey PRIMARY KEY (intervention_id);

ALTER TABLE ONLY messages
    ADD CONSTRAINT messages_pkey PRIMARY KEY (message_id);

ALTER TABLE ONLY notifications
    ADD CONSTRAINT notifications_pkey PRIMARY KEY (notification_id);

ALTER TABLE ONLY policies
    ADD CONSTRAINT policies_pkey PRIMARY KEY (policy_id);

ALTER TABLE ONLY policy_uses
    ADD CONSTRAINT policy_uses_pkey PRIMARY KEY (use_id);

ALTER TABLE ONLY policy_versions
    ADD CONSTRAINT policy_versions_pkey PRIMARY KEY (version_key);

ALTER TABLE ONLY posts
    ADD CONSTRAINT posts_pkey PRIMARY KEY (post_id);

ALTER TABLE ONLY reservations
    ADD CONSTRAINT reservations_pkey PRIMARY KEY (reservation_id);

ALTER TABLE ONLY room_members
    ADD CONSTRAINT room_members_pkey PRIMARY KEY (member_id);

ALTER TABLE ONLY room_threads
    ADD CONSTRAINT room_threads_pkey PRIMARY KEY (thread_key);

ALTER TABLE ONLY rooms
    ADD CONSTRAINT rooms_pkey PRIMARY KEY (room_id);

ALTER TABLE ONLY search_docs
    ADD CONSTRAINT search_docs_pkey PRIMARY KEY (key);

ALTER TABLE ONLY spaces
    ADD CONSTRAINT spaces_pkey PRIMARY KEY (space_id);

ALTER TABLE ONLY stream_tickets
    ADD CONSTRAINT stream_tickets_pkey PRIMARY KEY (ticket_hash);

ALTER TABLE ONLY task_events
    ADD CONSTRAINT task_events_pkey PRIMARY KEY (event_id);

ALTER TABLE ONLY tasks
    ADD CONSTRAINT tasks_pkey PRIMARY KEY (task_id);

ALTER TABLE ONLY a2a_tasks
    ADD CONSTRAINT uq_a2a_tasks_message UNIQUE (caller, agent_id, message_id);

ALTER TABLE ONLY idempotency_keys
    ADD CONSTRAINT uq_idempotency_keys_scope_key_hash UNIQUE (scope, key_hash);

ALTER TABLE ONLY room_members
    ADD CONSTRAINT uq_room_members_room_agent UNIQUE (room_id, agent_id);

ALTER TABLE ONLY webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (delivery_id);

ALTER TABLE ONLY webhooks
    ADD CONSTRAINT webhooks_pkey PRIMARY KEY (webhook_id);

CREATE INDEX ix_a2a_calls_agent ON a2a_calls USING btree (agent_id, call_id);

CREATE INDEX ix_a2a_calls_awaiting ON a2a_calls USING btree (approval_id) WHERE ((status)::text = 'awaiting_approval'::text);

CREATE INDEX ix_a2a_calls_due ON a2a_calls USING btree (due_at) WHERE (due_at IS NOT NULL);

CREATE INDEX ix_a2a_tasks_caller ON a2a_tasks USING btree (caller, agent_id, context_id);

CREATE INDEX ix_actions_agent_id ON actions USING btree (agent_id);

CREATE INDEX ix_approvals_audience ON approvals USING btree (audience, approval_id);

CREATE INDEX ix_approvals_due ON approvals USING btree (expires_at) WHERE (((status)::text = 'pending'::text) AND (expires_at IS NOT NULL));

CREATE INDEX ix_approvals_pending_task ON approvals USING btree (task_id) WHERE (((status)::text = 'pending'::text) AND (task_id IS NOT NULL));

CREATE INDEX ix_approvals_status ON approvals USING btree (status);

CREATE INDEX ix_approvals_to_escalate ON approvals USING btree (escalate_at) WHERE (((status)::text = 'pending'::text) AND (escalate_at IS NOT NULL));

CREATE INDEX ix_approvals_to_remind ON approvals USING btree (remind_at) WHERE (((status)::text = 'pending'::text) AND (reminded_at IS NULL) AND (remind_at IS NOT NULL));

CREATE INDEX ix_diagnostics_intervention ON diagnostics USING btree (intervention_id, diagnostic_id);

CREATE INDEX ix_enrollments_status_created ON enrollments USING btree (status, created_at);

CREATE INDEX ix_events_audience ON events USING btree (audience, event_id);

CREATE INDEX ix_idempotency_keys_created ON idempotency_keys USING btree (created_at);

CREATE INDEX ix_intervention_actions_intervention ON intervention_actions USING btree (intervention_id, action_id);

CREATE INDEX ix_interventions_created ON interventions USING btree (created_at);

CREATE INDEX ix_messages_inbox ON messages USING btree ("to", status, message_id) WHERE ("to" IS NOT NULL);

CREATE INDEX ix_messages_notification_reply ON messages USING btree (reply_to_notification) WHERE (reply_to_notification IS NOT NULL);

CREATE INDEX ix_messages_room ON messages USING btree (room_id, message_id) WHERE (room_id IS NOT NULL);

CREATE INDEX ix_messages_thread ON messages USING btree (thread_id, message_id);

CREATE INDEX ix_notifications_platform ON notifications USING btree (bridge, platform_message_id);

CREATE INDEX ix_policies_enabled ON policies USING btree (enabled);

CREATE INDEX ix_policy_uses_window ON policy_uses USING btree (policy_id, agent_id, decided_at);

CREATE UNIQUE INDEX ix_policy_versions_policy ON policy_versions USING btree (policy_id, version);

CREATE INDEX ix_posts_platform ON posts USING btree (bridge, platform_message_id);

CREATE INDEX ix_posts_subject ON posts USING btree (subject, subject_id);

CREATE INDEX ix_reservations_due ON reservations USING btree (expires_at) WHERE ((status)::text = 'active'::text);

CREATE INDEX ix_reservations_holder ON reservations USING btree (holder, reservation_id);

CREATE INDEX ix_reservations_task ON reservations USING btree (task_id) WHERE (((status)::text = 'active'::text) AND (task_id IS NOT NULL));

CREATE INDEX ix_reservations_workspace ON reservations USING btree (workspace, status, reservation_id);

CREATE UNIQUE INDEX ix_room_threads_room ON room_threads USING btree (room_id, bridge);

CREATE INDEX ix_rooms_space_id ON rooms USING btree (space_id);

CREATE INDEX ix_search_docs_document ON search_docs USING gin (document);

CREATE INDEX ix_search_docs_readers ON search_docs USING gin (readers);

CREATE INDEX ix_stream_tickets_expires ON stream_tickets USING btree (expires_at);

CREATE INDEX ix_task_events_task_id ON task_events USING btree (task_id);

CREATE INDEX ix_tasks_status_id ON tasks USING btree (status, task_id);

CREATE INDEX ix_tasks_status_lease ON tasks USING btree (status, lease_expires_at);

CREATE INDEX ix_webhook_deliveries_age ON webhook_deliveries USING btree (status, created_at);

CREATE INDEX ix_webhook_deliveries_due ON webhook_deliveries USING btree (next_attempt_at) WHERE (next_attempt_at IS NOT NULL);

CREATE INDEX ix_webhook_deliveries_webhook ON webhook_deliveries USING btree (webhook_id, delivery_id);

CREATE INDEX ix_webhooks_task ON webhooks USING btree (task_id, webhook_id) WHERE (task_id IS NOT NULL);

CREATE TRIGGER messages_thread_of_a_first_message BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION messages_thread_of_a_first_message();

CREATE TRIGGER search_actions AFTER INSERT ON actions FOR EACH ROW EXECUTE FUNCTION search_actions();

CREATE TRIGGER search_approvals AFTER INSERT OR UPDATE OF title, detail, audience ON approvals FOR EACH ROW EXECUTE FUNCTION search_approvals();

CREATE TRIGGER search_messages AFTER INSERT ON messages FOR EACH ROW EXECUTE FUNCTION search_messages();

CREATE TRIGGER search_task_events AFTER INSERT ON task_events FOR EACH ROW WHEN (NEW.message IS NOT NULL AND NEW.kind NOT IN ('claimed', 'lease_expired')) EXECUTE FUNCTION search_task_events();

CREATE TRIGGER search_tasks AFTER INSERT OR UPDATE OF title, description, payload, result ON tasks FOR EACH ROW EXECUTE FUNCTION search_tasks();

ALTER TABLE ONLY diagnostics
    ADD CONSTRAINT diagnostics_intervention_id_fkey FOREIGN KEY (intervention_id) REFERENCES interventions(intervention_id);

ALTER TABLE ONLY intervention_actions
    ADD CONSTRAINT intervention_actions_intervention_id_fkey FOREIGN KEY (intervention_id) REFERENCES interventions(intervention_id);

ALTER TABLE ONLY messages
    ADD CONSTRAINT messages_room_id_fkey FOREIGN KEY (room_id) REFERENCES rooms(room_id);

ALTER TABLE ONLY messages
    ADD CONSTRAINT messages_to_fkey FOREIGN KEY ("to") REFERENCES agents(agent_id);

ALTER TABLE ONLY policy_versions
    ADD CONSTRAINT policy_versions_policy_id_fkey FOREIGN KEY (policy_id) REFERENCES policies(policy_id);

ALTER TABLE ONLY room_members
    ADD CONSTRAINT room_members_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES agents(agent_id);

ALTER TABLE ONLY room_members
    ADD CONSTRAINT room_members_room_id_fkey FOREIGN KEY (room_id) REFERENCES rooms(room_id);

ALTER TABLE ONLY rooms
    ADD CONSTRAINT rooms_space_id_fkey FOREIGN KEY (space_id) REFERENCES spaces(space_id);

ALTER TABLE ONLY task_events
    ADD CONSTRAINT task_events_task_id_fkey FOREIGN KEY (task_id) REFERENCES tasks(task_id);

ALTER TABLE ONLY webhook_deliveries
    ADD CONSTRAINT webhook_deliveries_webhook_id_fkey FOREIGN KEY (webhook_id) REFERENCES webhooks(webhook_id);
