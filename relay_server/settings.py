"""Server settings: one pydantic-settings model, nested per part, read once.

Every setting is an environment variable and a flag of both entry points (``relay serve`` and
``python -m relay_server``), derived here from the model's fields:

- a field of the top level or of an unprefixed part is ``RELAY_<FIELD>`` and ``--<field>``
  (``RELAY_PORT``, ``--port``; ``RELAY_RATE_LIMIT``, ``--rate-limit``);
- a field of a prefixed part carries the part's name: ``RELAY_TELEGRAM_CHAT_ID``,
  ``--telegram-chat-id``.

Secrets (tokens) are environment variables only: a flag would show them to anyone who lists
processes. Importing this module loads neither aiohttp nor SQLAlchemy: the CLI builds its
``serve`` command from it.
"""

from __future__ import annotations

import os
import types
import typing
from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Network
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from relay_api.models import OPERATOR_TOKEN_PREFIX
from relay_core.auth import new_token
from relay_core.config import POSTGRES_POOL_SIZE, DomainSettings
from relay_core.paths import (
    DATABASE_FILE,
    default_data_dir,
    operator_token_path,
    private_dir,
    seal_key_path,
)

MEMORY_URL = "memory://"

# Names the environment may still use for a setting that was renamed.
_FORMER_NAMES = {"RELAY_SWEEP_SECONDS": "RELAY_LEASE_SWEEP_SECONDS"}


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _split_commas(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


T = typing.TypeVar("T")
# A list given as one comma-separated string in the environment or on the command line.
CommaSeparated = Annotated[list[T], BeforeValidator(_split_commas)]


class HttpSettings(_Part):
    """What a request may be and how long it may take."""

    max_body_bytes: int = Field(default=1024 * 1024, ge=1024, description="largest request body")
    header_timeout_seconds: float = Field(
        default=10.0, gt=0, description="time to send a request's head, from its first byte"
    )
    body_timeout_seconds: float = Field(
        default=30.0, gt=0, description="time to send a request's whole body, from its head"
    )
    max_connections: int = Field(
        default=1000,
        ge=1,
        description="open connections; past it a new one is answered 503 with Retry-After (the "
        "file limit is raised to fit, up to the hard limit)",
    )
    max_connections_per_address: int | None = Field(
        default=None,
        ge=1,
        description="open connections of one client address (behind a trusted proxy: "
        "requests in flight); default: a tenth of max_connections",
    )
    max_waits_per_caller: int = Field(
        default=20,
        ge=1,
        description="event streams and long-polls one agent may hold open at once (the "
        "operator is not counted); past it one more is answered 429 with Retry-After",
    )
    trusted_proxies: CommaSeparated[IPv4Network | IPv6Network] = Field(
        default_factory=list,
        description="CIDRs of proxies whose X-Forwarded-For is believed (comma-separated)",
    )

    cors_origins: CommaSeparated[str] = Field(
        default_factory=list,
        description="web origins whose pages may call the API (comma-separated; '*': any)",
    )

    @property
    def per_address(self) -> int:
        """What one client address may hold open: the setting, or a tenth of the ceiling."""
        return self.max_connections_per_address or max(1, self.max_connections // 10)


class LimitSettings(_Part):
    """Rate limits: per caller, per enrolling address, per refused address."""

    rate_limit: float = Field(default=100.0, ge=0, description="requests/s per caller; 0: off")
    rate_limit_burst: float = Field(default=400.0, ge=1, description="a caller's burst")
    enroll_rate_limit: float = Field(default=1.0, ge=0, description="enrollments/s per address")
    enroll_rate_limit_burst: float = Field(default=20.0, ge=1, description="an address's burst")
    refusal_rate_limit: float = Field(
        default=2.0, ge=0, description="refused authentications/s per address before 429; 0: off"
    )
    refusal_rate_limit_burst: float = Field(default=20.0, ge=1, description="refusals' burst")


class SqliteSettings(_Part):
    """The embedded default."""

    synchronous: Literal["FULL", "NORMAL"] = Field(
        default="FULL",
        description="FULL: a 2xx survives power loss (one fsync per group commit); NORMAL: "
        "no fsync at commit, so a write costs less, and it survives a crash of the process, "
        "not of the machine (a power cut can lose the last commits)",
    )


class PostgresSettings(_Part):
    """The database for several processes or machines."""

    pool_size: int = Field(
        default=POSTGRES_POOL_SIZE,
        ge=1,
        le=1000,
        description="connections each Relay process holds at most (size PostgreSQL's "
        "max_connections for this times the processes, plus one LISTEN connection each)",
    )
    synchronous_commit: Literal["on", "off", "local", "remote_write", "remote_apply"] | None = (
        Field(
            default=None,
            description="PostgreSQL's synchronous_commit for Relay's sessions: on answers a "
            "write once it is flushed; off answers before, and a crash of PostgreSQL's machine "
            "can lose the last commits (never half of one); default: the server's",
        )
    )


class TelegramSettings(_Part):
    """The operator's Telegram chat (the local bridge when no bot is configured)."""

    bot_token: SecretStr | None = Field(default=None, description="the bot's token")
    chat_id: int | None = Field(default=None, description="the operator's chat")
    api_url: str = Field(default="https://api.telegram.org", description="Bot API base URL")
    mode: Literal["poll", "webhook"] = Field(
        default="poll",
        description="how replies come back: poll (long polling, works behind NAT; of several "
        "instances one polls) or webhook (Telegram calls /v1/bridges/telegram/webhook)",
    )
    webhook_secret: SecretStr | None = Field(
        default=None, description="the secret Telegram sends with each webhook call"
    )
    mirror_rooms: bool = Field(
        default=False,
        description="copy agents' room posts into each room's forum topic (after "
        "relay spaces sync)",
    )
    operators: CommaSeparated[int] = Field(
        default_factory=list,
        description="Telegram user ids allowed to answer and decide (comma-separated; empty: "
        "anyone in the chat)",
    )


class SlackSettings(_Part):
    """The operator's Slack channel (docs/bridges/slack.md)."""

    bot_token: SecretStr | None = Field(default=None, description="the bot's token (xoxb-…)")
    signing_secret: SecretStr | None = Field(
        default=None, description="the app's signing secret, to verify what Slack sends"
    )
    channel: str | None = Field(default=None, description="the operator channel's id (C…)")
    operators: CommaSeparated[str] = Field(
        default_factory=list,
        description="Slack user ids allowed to answer and decide (comma-separated; empty: "
        "anyone in the channel)",
    )
    api_url: str = Field(default="https://slack.com/api/", description="Web API base URL")

    @property
    def configured(self) -> bool:
        """Whether the bridge is on: a token and a channel."""
        return self.bot_token is not None and self.channel is not None


class MatrixSettings(_Part):
    """The operator's Matrix room (docs/bridges/matrix.md)."""

    homeserver: str | None = Field(default=None, description="the homeserver's URL")
    user_id: str | None = Field(default=None, description="the bot's user id (@relay:example)")
    access_token: SecretStr | None = Field(default=None, description="the bot's access token")
    room_id: str | None = Field(default=None, description="the operator room's id (!…:example)")
    operators: CommaSeparated[str] = Field(
        default_factory=list,
        description="Matrix user ids allowed to answer and decide (comma-separated; empty: "
        "anyone in the room)",
    )
    mirror_rooms: bool = Field(
        default=False, description="copy room posts to their Matrix rooms (after spaces sync)"
    )

    @property
    def configured(self) -> bool:
        """Whether the bridge is on: a homeserver, the bot and its room."""
        return bool(self.homeserver and self.user_id and self.access_token and self.room_id)


def _public_origin(url: str) -> str:
    """The links' base: an http(s) URL with a host, and no query or fragment to append to."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ValueError("an http:// or https:// URL with a host: Relay as a browser reaches it")
    return url.rstrip("/")


class EmailSettings(_Part):
    """The operator's email (docs/bridges/email.md): SMTP out, one-click decision links."""

    smtp_host: str | None = Field(default=None, description="the SMTP server's host")
    smtp_port: int = Field(default=587, ge=1, le=65535, description="the SMTP server's port")
    smtp_security: Literal["starttls", "tls", "none"] = Field(
        default="starttls",
        description="starttls (port 587), tls (implicit, port 465) or none (a local relay)",
    )
    smtp_username: str | None = Field(default=None, description="the SMTP login, if any")
    smtp_password: SecretStr | None = Field(default=None, description="the SMTP password")
    smtp_ca_file: Path | None = Field(
        default=None,
        description="CA certificates to trust the SMTP server by; default: the system's",
    )
    sender: str | None = Field(default=None, description="the From address (relay@example.com)")
    to: CommaSeparated[str] = Field(
        default_factory=list, description="the operator's addresses (comma-separated)"
    )
    public_url: Annotated[str, AfterValidator(_public_origin)] | None = Field(
        default=None,
        description="Relay's address as the operator's browser reaches it, for the decision "
        "links (https://relay.example.com)",
    )

    @property
    def configured(self) -> bool:
        """Whether the bridge is on: a server, a sender, an address and the links' base."""
        return bool(self.smtp_host and self.sender and self.to and self.public_url)


# A part's fields are named with its prefix outside the model (RELAY_TELEGRAM_CHAT_ID).
PREFIXED = {"sqlite", "postgres", "telegram", "slack", "matrix", "email"}


class Settings(BaseSettings):
    """Everything the server can be told."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    host: str = Field(default="127.0.0.1", description="address to listen on")
    port: int = Field(default=8765, ge=0, le=65535, description="port to listen on")
    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="where the SQLite file and the generated operator token live",
    )
    database_url: str | None = Field(
        default=None,
        description="a SQLite file (sqlite:///path), PostgreSQL (postgresql+asyncpg://…, with the "
        "postgres extra), or 'memory://' to keep nothing (a SQLite file in a temporary directory, "
        "removed at exit); default: relay.db in the data dir",
    )
    operator_token: SecretStr | None = Field(
        default=None,
        description="the operator's bearer token; default: generated once, kept 0600 in the "
        "data dir",
    )
    auth: Literal["token", "none"] = Field(
        default="token",
        description="'none' turns checks off for demos: X-Agent-ID is trusted as given",
    )
    workers: int = Field(default=1, ge=1, le=64, description="processes; above 1 needs PostgreSQL")
    public_url: Annotated[str, AfterValidator(_public_origin)] | None = Field(
        default=None,
        description="Relay's address as other systems reach it (https://relay.example.com), "
        "for the links of the A2A agent cards; default: as each request reached it",
    )
    shutdown_timeout: float = Field(
        default=10.0, ge=0, description="seconds in-flight requests get to finish on shutdown"
    )
    log_level: str = Field(
        default="INFO",
        description="DEBUG, INFO, WARNING or ERROR (INFO writes an access line a request)",
    )
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="'json': one JSON object per line, with request_id, operation, status, "
        "duration_ms and caller on access lines",
    )
    mcp_operator_without_confirmation: bool = Field(
        default=False,
        description="/mcp with the operator's token: approve, reject and policy changes run "
        "without asking the human through the client (risky: the LLM decides alone)",
    )
    http: HttpSettings = Field(default_factory=HttpSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    domain: DomainSettings = Field(default_factory=DomainSettings)
    sqlite: SqliteSettings = Field(default_factory=SqliteSettings)
    postgres: PostgresSettings = Field(default_factory=PostgresSettings)
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    matrix: MatrixSettings = Field(default_factory=MatrixSettings)
    email: EmailSettings = Field(default_factory=EmailSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments first, then ``RELAY_*`` variables under the names of ``options()``."""
        return init_settings, _Environment(settings_cls)

    @model_validator(mode="after")
    def _slack_is_verifiable(self) -> Settings:
        if self.slack.configured and self.slack.signing_secret is None:
            raise ValueError(
                "RELAY_SLACK_SIGNING_SECRET is needed to verify what Slack sends (the app's "
                "Basic Information page shows it)"
            )
        return self

    @model_validator(mode="after")
    def _escalation_names_configured_platforms(self) -> Settings:
        configured = {
            "telegram": self.telegram.bot_token is not None and self.telegram.chat_id is not None,
            "slack": self.slack.configured,
            "matrix": self.matrix.configured,
            "email": self.email.configured,
        }
        steps = self.domain.escalation_steps
        for step in steps:
            if not configured.get(step, False):
                raise ValueError(
                    f"RELAY_ESCALATION names {step!r}, which is not a configured platform"
                    f" (configured: {', '.join(n for n, on in configured.items() if on) or 'none'})"
                )
        if len(set(steps)) != len(steps):
            raise ValueError("RELAY_ESCALATION names a platform twice")
        return self

    @property
    def resolved_database_url(self) -> str:
        """The database URL, defaulting to a SQLite file in the data directory."""
        return self.database_url or f"sqlite:///{self.data_dir / DATABASE_FILE}"


@dataclass(frozen=True)
class Option:
    """One setting as the outside names it."""

    path: tuple[str, ...]  # ("telegram", "chat_id")
    field: FieldInfo

    @property
    def name(self) -> str:
        """``telegram_chat_id``: the part's name when it is prefixed, then the field's."""
        part, *rest = self.path
        return "_".join(self.path) if part in PREFIXED else "_".join(rest or [part])

    @property
    def env(self) -> str:
        return f"RELAY_{self.name.upper()}"

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def secret(self) -> bool:
        return SecretStr in _members(self.field.annotation)

    @property
    def kind(self) -> type:
        """What a flag's value is read as: the settings validate it further."""
        members = _members(self.field.annotation) - {type(None)}
        for simple in (bool, int, float, Path):
            if members == {simple}:
                return simple
        return str

    @property
    def help(self) -> str:
        default = self.field.get_default(call_default_factory=True)
        shown = "" if default in (None, [], "") or isinstance(default, Path) else f"; {default}"
        return f"{self.field.description or self.name} [{self.env}{shown}]"


def _members(annotation: Any) -> set[Any]:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return {member for arg in typing.get_args(annotation) for member in _members(arg)}
    if origin is Literal:
        return {str}
    return {origin or annotation}


def options() -> list[Option]:
    """Every setting, parts included, in the order of the model."""
    found: list[Option] = []
    for name, field in Settings.model_fields.items():
        part = field.annotation
        if isinstance(part, type) and issubclass(part, BaseModel):
            found += [Option((name, sub), info) for sub, info in part.model_fields.items()]
        else:
            found.append(Option((name,), field))
    return found


def settings_from(given: dict[str, Any]) -> Settings:
    """Settings from values given by ``Option.name`` (flags), over the environment's."""
    nested: dict[str, Any] = {}
    by_name = {option.name: option for option in options()}
    for name, value in given.items():
        if value is not None:
            _place(nested, by_name[name].path, value)
    return Settings(**nested)


def _place(into: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    *parts, last = path
    for part in parts:
        into = into.setdefault(part, {})
    into[last] = value


class _Environment(PydanticBaseSettingsSource):
    """``RELAY_<NAME>`` for every option, nested into its part."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """What the environment sets of one top-level field (a part's options as a dict), for
        pydantic-settings' API; Relay reads them all at once through ``__call__``."""
        return self().get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for option in options():
            value = os.environ.get(option.env)
            if value is None and option.env in _FORMER_NAMES:
                value = os.environ.get(_FORMER_NAMES[option.env])
            if value is not None:
                _place(found, option.path, value)
        return found


def ensure_operator_token(settings: Settings) -> str:
    """The operator token: configured, or generated once and kept 0600 in the data dir."""
    if settings.operator_token is not None:
        return settings.operator_token.get_secret_value()
    return _kept(operator_token_path(settings.data_dir), OPERATOR_TOKEN_PREFIX)


def server_secret(settings: Settings) -> str:
    """What the server seals webhook secrets under: the operator token, which every instance
    shares; without tokens (``RELAY_AUTH=none``) a key of its own, kept 0600 beside where the
    token would be."""
    if settings.auth == "token":
        return ensure_operator_token(settings)
    return _kept(seal_key_path(settings.data_dir), "rly_seal_")


def _kept(path: Path, prefix: str) -> str:
    """The secret in ``path``, generated (with ``prefix``) and written 0600 the first time."""
    if path.exists():
        return path.read_text().strip()
    private_dir(path.parent)
    secret = new_token(prefix)
    # O_EXCL: when two processes start at once, one writes and the other reads what it wrote.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(secret + "\n")
    return secret
