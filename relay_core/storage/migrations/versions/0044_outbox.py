"""One outbox: webhook deliveries and the operator's platforms' work (cards, their edits,
reminders, mirrored posts) in one queue table, ``outbox``, sent by one sender. A row is to a
webhook (``webhook_id``) or to a platform (``bridge``), never both.

Revision ID: 0044
Revises: 0043
Create Date: 2026-12-08
"""

from alembic import op

revision = "0044"
down_revision = "0043"
branch_labels = None
depends_on = None

FIELDS = (
    "delivery_id, webhook_id, event_id, event_type, message_id, body, attempts, status,"
    " last_status_code, last_error, next_attempt_at, created_at, traceparent"
)

# SQLite cannot make a column nullable in place: the table is made again, rows copied.
SQLITE = [
    """CREATE TABLE outbox (
    delivery_id INTEGER NOT NULL,
    webhook_id INTEGER,
    bridge VARCHAR(64),
    event_id BIGINT NOT NULL,
    event_type VARCHAR(200) NOT NULL,
    message_id VARCHAR(128) NOT NULL,
    body TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    status VARCHAR(32) NOT NULL,
    last_status_code INTEGER,
    last_error TEXT,
    next_attempt_at DATETIME,
    created_at DATETIME NOT NULL,
    traceparent VARCHAR(55),
    PRIMARY KEY (delivery_id),
    FOREIGN KEY(webhook_id) REFERENCES webhooks (webhook_id),
    CONSTRAINT outbox_one_target CHECK ((webhook_id IS NULL) <> (bridge IS NULL))
)""",
    f"INSERT INTO outbox ({FIELDS}) SELECT {FIELDS} FROM webhook_deliveries",
    "DROP VIEW webhook_deliveries_encoded",
    "DROP TABLE webhook_deliveries",
    "CREATE INDEX ix_outbox_webhook ON outbox (webhook_id, delivery_id)",
    'CREATE INDEX ix_outbox_due ON outbox (next_attempt_at) WHERE "next_attempt_at" IS NOT NULL',
    "CREATE INDEX ix_outbox_age ON outbox (status, created_at)",
]

POSTGRESQL = [
    "ALTER TABLE webhook_deliveries RENAME TO outbox",
    "ALTER SEQUENCE webhook_deliveries_delivery_id_seq RENAME TO outbox_delivery_id_seq",
    "ALTER TABLE outbox RENAME CONSTRAINT webhook_deliveries_pkey TO outbox_pkey",
    "ALTER TABLE outbox RENAME CONSTRAINT webhook_deliveries_webhook_id_fkey"
    " TO outbox_webhook_id_fkey",
    "ALTER INDEX ix_webhook_deliveries_webhook RENAME TO ix_outbox_webhook",
    "ALTER INDEX ix_webhook_deliveries_due RENAME TO ix_outbox_due",
    "ALTER INDEX ix_webhook_deliveries_age RENAME TO ix_outbox_age",
    "ALTER TABLE outbox ALTER COLUMN webhook_id DROP NOT NULL",
    "ALTER TABLE outbox ADD COLUMN bridge character varying(64)",
    "ALTER TABLE outbox ADD CONSTRAINT outbox_one_target"
    " CHECK ((webhook_id IS NULL) <> (bridge IS NULL))",
]


def upgrade() -> None:
    bind = op.get_bind()
    for statement in SQLITE if bind.dialect.name == "sqlite" else POSTGRESQL:
        bind.exec_driver_sql(statement)


def downgrade() -> None:
    raise RuntimeError("the outbox holds platform work webhook_deliveries had no room for")
