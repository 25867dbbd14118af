"""Server settings, from flags and ``RELAY_*`` environment variables (pydantic-settings)."""

from __future__ import annotations

import os
from ipaddress import IPv4Network, IPv6Network
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from relay_core.auth import OPERATOR_TOKEN_PREFIX, new_token
from relay_core.paths import DATABASE_FILE, default_data_dir, operator_token_path
from relay_core.storage.postgres import POOL_SIZE

MEMORY_URL = "memory://"


class Settings(BaseSettings):
    """Everything the server can be told; every field is also ``RELAY_<NAME>``."""

    model_config = SettingsConfigDict(env_prefix="RELAY_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    data_dir: Path = Field(default_factory=default_data_dir)
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL; default: SQLite file in the data dir; 'memory://' keeps "
        "nothing on disk",
    )
    operator_token: SecretStr | None = None
    auth: Literal["token", "none"] = "token"
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    presence_ttl: float = Field(default=60.0, gt=0)
    task_lease_seconds: int = Field(default=300, ge=1, le=86400)
    enrollment_ttl_seconds: int = Field(default=86400, ge=60)
    sqlite_synchronous: Literal["FULL", "NORMAL"] = Field(
        default="FULL",
        description="FULL survives power loss; NORMAL (with WAL) survives a process crash only",
    )
    postgres_pool_size: int = Field(
        default=POOL_SIZE, ge=1, le=1000, description="PostgreSQL connections per process"
    )
    postgres_synchronous_commit: (
        Literal["on", "off", "local", "remote_write", "remote_apply"] | None
    ) = Field(
        default=None,
        description="PostgreSQL synchronous_commit for Relay's sessions; default: the server's",
    )
    shutdown_timeout: float = Field(default=10.0, ge=0)
    header_timeout_seconds: float = Field(
        default=10.0, gt=0, description="time to send a request's head, from its first byte"
    )
    body_timeout_seconds: float = Field(
        default=30.0, gt=0, description="longest wait for the next bytes of a request body"
    )
    max_connections: int = Field(
        default=1000, ge=1, description="open connections; past it a new one is answered 503"
    )
    idempotency_ttl_seconds: float = Field(default=86400.0, ge=1)
    rate_limit: float = Field(default=100.0, ge=0, description="requests/s per caller; 0: off")
    rate_limit_burst: float = Field(default=400.0, ge=1)
    enroll_rate_limit: float = Field(default=1.0, ge=0, description="enrollments/s per address")
    enroll_rate_limit_burst: float = Field(default=20.0, ge=1)
    refusal_rate_limit: float = Field(
        default=2.0, ge=0, description="refused authentications/s per address before 429; 0: off"
    )
    refusal_rate_limit_burst: float = Field(default=20.0, ge=1)
    max_wait_seconds: float = Field(
        default=60.0, ge=0, le=60, description="cap on long-poll waits (behind a proxy's timeout)"
    )
    sweep_seconds: float = Field(
        default=1.0,
        ge=0,
        # RELAY_LEASE_SWEEP_SECONDS: its name before the sweep also expired enrollments.
        validation_alias=AliasChoices(
            "sweep_seconds", "RELAY_SWEEP_SECONDS", "RELAY_LEASE_SWEEP_SECONDS"
        ),
        description="how often lapsed task leases are reaped and due enrollments expired in the "
        "background; 0: only when an operation finds them",
    )
    telegram_bot_token: SecretStr | None = None
    telegram_chat_id: int | None = None
    telegram_api_url: str = "https://api.telegram.org"
    telegram_mode: Literal["poll", "webhook"] = "poll"
    telegram_webhook_secret: SecretStr | None = None
    telegram_mirror_rooms: bool = False
    trusted_proxies: Annotated[list[IPv4Network | IPv6Network], NoDecode] = Field(
        default_factory=list,
        description="CIDRs of proxies whose X-Forwarded-For is believed (comma-separated)",
    )
    workers: int = Field(default=1, ge=1, le=64, description="processes; above 1 needs PostgreSQL")
    log_level: str = "INFO"

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @property
    def resolved_database_url(self) -> str:
        """The database URL, defaulting to a SQLite file in the data directory."""
        return self.database_url or f"sqlite:///{self.data_dir / DATABASE_FILE}"


def ensure_operator_token(settings: Settings) -> str:
    """The operator token: configured, or generated once and kept 0600 in the data dir."""
    if settings.operator_token is not None:
        return settings.operator_token.get_secret_value()
    path = operator_token_path(settings.data_dir)
    if path.exists():
        return path.read_text().strip()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    token = new_token(OPERATOR_TOKEN_PREFIX)
    # O_EXCL: when two processes start at once, one writes and the other reads what it wrote.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(token + "\n")
    return token
