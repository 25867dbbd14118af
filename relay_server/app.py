"""The application factory and its lifecycle: storage, bridge and services open and close here."""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime

from aiohttp import web
from aiohttp.typedefs import Handler
from pydantic import SecretBytes

from relay_core.auth import hash_secret
from relay_core.config import CoreConfig
from relay_core.paths import operator_token_path
from relay_core.ports import Bridge, Storage
from relay_core.services import Context, Services
from relay_core.services.base import utcnow
from relay_core.storage.sqlite import SqliteStorage
from relay_server.a2a.remote import RemoteA2A
from relay_server.a2a.routes import add_a2a
from relay_server.addresses import AddressSlots
from relay_server.api_docs import add_api_docs
from relay_server.app_keys import (
    CALLER_LIMIT,
    CALLER_WAITS,
    ENROLL_LIMIT,
    FORWARDED_SLOTS,
    KEEPALIVES,
    REFUSALS,
    SERVES,
    SERVICES,
    SETTINGS,
    TRACING,
)
from relay_server.background import follow_a2a_calls, sweep
from relay_server.bindings import bind
from relay_server.bridges.local import LocalBridge
from relay_server.console import add_console
from relay_server.cors import allow_origins
from relay_server.mcp import route as mcp_route
from relay_server.metrics import add_metrics, observe_commit
from relay_server.middleware import echo_request_id, front_door
from relay_server.openapi import served_document
from relay_server.ratelimit import TokenBucket
from relay_server.refusals import Refusals
from relay_server.routes import add_routes
from relay_server.sender import send_outbox
from relay_server.settings import MEMORY_URL, Settings, server_secret
from relay_server.sse import KeepAlives
from relay_server.tracing import Tracing

log = logging.getLogger("relay.server")


async def open_storage(settings: Settings) -> Storage:
    """The storage the settings name, migrated to the newest schema."""
    url = settings.resolved_database_url
    storage: Storage
    if url == MEMORY_URL:
        storage = SqliteStorage.throwaway()
    elif url.startswith("sqlite"):
        storage = SqliteStorage(url, synchronous=settings.sqlite.synchronous)
    else:
        # PostgreSQL's adapter (SQLAlchemy's asyncpg dialect): loaded only where it is used.
        from relay_core.storage.postgres import PostgresStorage

        storage = PostgresStorage(
            url,
            pool_size=settings.postgres.pool_size,
            synchronous_commit=settings.postgres.synchronous_commit,
        )
    await storage.migrate()
    await storage.listen()
    return storage


def open_bridges(settings: Settings) -> tuple[Bridge, ...]:
    """The operator's platforms the settings configure, in the order their answers count
    (Telegram, Slack, Matrix); the built-in local bridge when there is none. A platform's
    module (and its library: slack-sdk, aiosmtplib) is imported only when it is configured."""
    bridges: list[Bridge] = []
    if settings.telegram.bot_token is not None and settings.telegram.chat_id is not None:
        from relay_server.bridges.telegram.sending import TelegramBridge

        bridges.append(
            TelegramBridge(
                settings.telegram.bot_token.get_secret_value(),
                settings.telegram.chat_id,
                api_url=settings.telegram.api_url,
            )
        )
    if settings.slack.bot_token is not None and settings.slack.channel is not None:
        from relay_server.bridges.slack.sending import SlackBridge

        bridges.append(
            SlackBridge(
                settings.slack.bot_token.get_secret_value(),
                settings.slack.channel,
                api_url=settings.slack.api_url,
            )
        )
    bot = settings.matrix
    if bot.homeserver and bot.user_id and bot.access_token and bot.room_id:
        from relay_server.bridges.matrix.sending import MatrixBridge

        token = bot.access_token.get_secret_value()
        bridges.append(
            MatrixBridge(bot.homeserver, bot.user_id, token, bot.room_id, operators=bot.operators)
        )
    mail = settings.email
    if mail.configured and mail.smtp_host and mail.sender and mail.public_url:
        from relay_server.bridges.email.sending import EmailBridge

        password = mail.smtp_password.get_secret_value() if mail.smtp_password else None
        bridges.append(
            EmailBridge(
                host=mail.smtp_host,
                port=mail.smtp_port,
                security=mail.smtp_security,
                sender=mail.sender,
                recipients=mail.to,
                public_url=mail.public_url,
                secret=server_secret(settings).encode(),
                username=mail.smtp_username,
                password=password,
                ca_file=mail.smtp_ca_file,
            )
        )
    return tuple(bridges) if bridges else (LocalBridge(),)


def core_config(settings: Settings) -> CoreConfig:
    """The domain's part of the settings, and what the server derives from the rest (the
    operator token only as a hash)."""
    auth = settings.auth == "token"
    secret = server_secret(settings)  # with tokens on, the operator token itself
    return CoreConfig(
        **settings.domain.model_dump(),
        auth_enabled=auth,
        mirror_bridges=frozenset(
            name
            for name, mirrors in (
                ("telegram", settings.telegram.mirror_rooms),
                ("matrix", settings.matrix.mirror_rooms),
            )
            if mirrors
        ),
        operator_token_hash=hash_secret(secret) if auth else "",
        server_secret=SecretBytes(secret.encode()),
    )


def create_app(
    settings: Settings | None = None,
    *,
    storage: Storage | None = None,
    bridges: Sequence[Bridge] | None = None,
    clock: Callable[[], datetime] = utcnow,
    tracing: Tracing | None = None,
) -> web.Application:
    """A ready-to-run Relay application; ``storage``/``bridges``/``clock`` override for
    tests; ``tracing`` sends a span of each request (``Tracing.from_environment``)."""
    settings = settings or Settings()
    app = web.Application(
        client_max_size=settings.http.max_body_bytes,
        middlewares=[front_door],
    )
    app[SETTINGS] = settings
    app[FORWARDED_SLOTS] = AddressSlots(settings.http.per_address)
    app[CALLER_WAITS] = AddressSlots(settings.http.max_waits_per_caller)
    app[CALLER_LIMIT] = TokenBucket(settings.limits.rate_limit, settings.limits.rate_limit_burst)
    app[ENROLL_LIMIT] = TokenBucket(
        settings.limits.enroll_rate_limit, settings.limits.enroll_rate_limit_burst
    )
    app[KEEPALIVES] = KeepAlives()
    app[TRACING] = tracing

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        store = storage or await open_storage(settings)
        if isinstance(store, SqliteStorage):
            store.observe_commits(observe_commit)
        if tracing is not None:
            store.observe_statements(tracing.statements(store.name))
        platforms = tuple(bridges) if bridges else open_bridges(settings)
        for platform in platforms:
            await platform.start()
        remote_agents = RemoteA2A(settings.domain.a2a_allow_private)
        config = core_config(settings)
        services = Services(Context(store, platforms, config, clock, remote_agents=remote_agents))
        app[SERVICES] = services
        app[SERVES] = bind(services)
        refusal_limit = TokenBucket(
            settings.limits.refusal_rate_limit, settings.limits.refusal_rate_limit_burst
        )
        app[REFUSALS] = Refusals(services, refusal_limit, clock=lambda: clock().timestamp())
        names = ", ".join(platform.name for platform in platforms)
        kind = f"{store.name} ({store.library})" if isinstance(store, SqliteStorage) else store.name
        log.info("storage %s, bridge %s, auth %s", kind, names, settings.auth)
        background = [
            asyncio.create_task(app[REFUSALS].flush_forever(), name="refusal-audit"),
            asyncio.create_task(app[KEEPALIVES].run(), name="keep-alives"),
        ]
        background += _platform_loops(services, settings)
        background.append(asyncio.create_task(send_outbox(services), name="outbox"))
        background.append(asyncio.create_task(follow_a2a_calls(services), name="a2a-calls"))
        if settings.domain.sweep_seconds > 0:
            sweeping = sweep(services, settings.domain.sweep_seconds)
            background.append(asyncio.create_task(sweeping, name="sweep"))
        try:
            yield
        finally:
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)
            await remote_agents.close()
            if tracing is not None:
                await asyncio.to_thread(tracing.shutdown)  # sends the spans still held
            for platform in platforms:
                await platform.close()
            await store.close()

    async def wake_waiters(app: web.Application) -> None:
        # Runs before aiohttp waits for in-flight handlers: long-polls answer now.
        app[SERVICES].ctx.storage.hub.close()

    app.on_response_prepare.append(echo_request_id)
    app.cleanup_ctx.append(lifecycle)
    app.on_shutdown.append(wake_waiters)
    add_routes(app)

    async def openapi(request: web.Request) -> web.Response:
        return web.Response(body=served_document(), content_type="application/json")

    app.router.add_get("/openapi.json", openapi, name="openapi")
    add_a2a(app)  # its own protocol, as /mcp is
    if mcp_route.available():
        mcp_route.add_mcp(app)  # its own protocol: outside the operation table and the SDK
    # Platforms' callbacks, not API operations: outside the route table and the SDK. Each
    # answers 404 while its platform is not configured.
    for path, (module, handler) in PLATFORM_CALLBACKS.items():
        name = path.removeprefix("/v1/bridges/").replace("/", "-")
        app.router.add_post(path, _loaded_when_called(module, handler), name=name)
    add_metrics(app)
    add_console(app, token_hint(settings))
    add_api_docs(app)
    allow_origins(app, settings.http.cors_origins)
    return app


BRIDGES = "relay_server.bridges"
# Each platform callback's path, and the handler answering it (module, function).
PLATFORM_CALLBACKS = {
    "/v1/bridges/telegram/webhook": (f"{BRIDGES}.telegram.receiving", "webhook"),
    "/v1/bridges/slack/events": (f"{BRIDGES}.slack.receiving", "events"),
    "/v1/bridges/slack/interactions": (f"{BRIDGES}.slack.receiving", "interactions"),
    "/v1/bridges/email/link": (f"{BRIDGES}.email.receiving", "shown"),
    "/v1/bridges/email/decide": (f"{BRIDGES}.email.receiving", "decided"),
}


def _loaded_when_called(module: str, handler: str) -> Handler:
    """``handler`` of ``module``, imported at its first request: a server whose platform is not
    configured never loads it (nor its library), and answers as the handler does (404)."""

    async def handle(request: web.Request) -> web.StreamResponse:
        found: Handler = getattr(importlib.import_module(module), handler)
        return await found(request)

    return handle


def _platform_loops(services: Services, settings: Settings) -> list[asyncio.Task[None]]:
    """The configured platforms' own loops: Telegram's long poll, Matrix's sync."""
    loops = []
    bot = services.ctx.bridge_named("telegram")
    if bot is not None:
        from relay_server.bridges.telegram import receiving as telegram
        from relay_server.bridges.telegram.sending import TelegramBridge

        assert isinstance(bot, TelegramBridge)
        if bot.chat_id < 0 and not settings.telegram.operators:
            log.warning(  # a group's id is negative, a private chat's positive
                "the Telegram chat is a group: anyone in it may answer and decide; set "
                "RELAY_TELEGRAM_OPERATORS to the operators' user ids"
            )
        if settings.telegram.mode == "poll":
            poll = telegram.poll(services, bot, operators=settings.telegram.operators)
            loops.append(asyncio.create_task(poll, name="telegram-poll"))
    room = services.ctx.bridge_named("matrix")
    if room is not None:
        from relay_server.bridges.matrix import receiving as matrix
        from relay_server.bridges.matrix.sending import MatrixBridge

        assert isinstance(room, MatrixBridge)
        following = matrix.sync_forever(services, room, settings.matrix.operators)
        loops.append(asyncio.create_task(following, name="matrix-sync"))
    return loops


def token_hint(settings: Settings) -> str:
    """Where this server's operator token is, for the console's sign-in page."""
    if settings.operator_token is not None:
        return "It is the RELAY_OPERATOR_TOKEN the server was started with."
    return f"On the server's machine: cat {operator_token_path(settings.data_dir)}"
