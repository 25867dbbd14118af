"""interventions.participants: the agents the operator adds to an intervention, who may change it
beside the agent that created it (an intervention made before has none)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

from tests.storage.chain.types import Json

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("interventions") as table:
        table.add_column(
            sa.Column("participants", Json, nullable=False, server_default=sa.text("'[]'"))
        )


def downgrade() -> None:
    with op.batch_alter_table("interventions") as table:
        table.drop_column("participants")
