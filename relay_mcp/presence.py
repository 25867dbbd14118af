"""An agent is ``online`` while its ``relay mcp`` session runs: the session beats for it, well
within the server's presence window, so that it goes ``offline`` at most one window after the
session ends."""

from __future__ import annotations

import asyncio
import logging

from relay_client import AsyncRelayClient, errors

BEAT_SECONDS = 20.0  # a third of the server's default presence window (RELAY_PRESENCE_TTL)

log = logging.getLogger("relay.mcp")


async def beat(relay: AsyncRelayClient, every: float = BEAT_SECONDS) -> None:
    """Heartbeat as the agent every ``every`` seconds until cancelled, or until the server
    refuses the token; a server that cannot be reached is tried again at the next beat."""
    while True:
        try:
            await relay.agents.heartbeat()
        except errors.AuthenticationError as exc:
            log.error("presence stopped: %s", exc)
            return
        except errors.RelayError as exc:
            log.warning("presence: %s", exc)
        await asyncio.sleep(every)
