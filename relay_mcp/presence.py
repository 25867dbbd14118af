"""An agent is ``online`` while its ``relay mcp`` session runs: the session beats for it, well
within the server's presence window (each heartbeat's answer says it: a third of it, at most
``BEAT_SECONDS``), so that it goes ``offline`` at most one window after the session ends."""

from __future__ import annotations

import asyncio
import logging

from relay_client import AsyncRelayClient, errors

BEAT_SECONDS = 20.0  # a third of the server's default presence window (RELAY_PRESENCE_TTL)
SHORTEST_BEAT = 1.0

log = logging.getLogger("relay.mcp")


async def beat(relay: AsyncRelayClient, every: float = BEAT_SECONDS) -> None:
    """Heartbeat as the agent every ``every`` seconds, or more often where the server's
    presence window asks it, until cancelled or until the server refuses the token; a server
    that cannot be reached is tried again at the next beat."""
    while True:
        try:
            answer = await relay.agents.heartbeat()
            if answer.presence_window_seconds is not None:
                every = min(every, max(answer.presence_window_seconds / 3, SHORTEST_BEAT))
        except errors.AuthenticationError as exc:
            log.error("presence stopped: %s", exc)
            return
        except errors.RelayError as exc:
            log.warning("presence: %s", exc)
        await asyncio.sleep(every)
