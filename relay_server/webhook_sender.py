"""Sends webhook deliveries: in the background, on one instance at a time, a bounded number in
flight per endpoint and in all, so that a slow or dead endpoint slows neither the API nor the
other endpoints. What to send and how it went are the service's (``relay_core.services.
webhooks``); this module signs, POSTs and reads the answer."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import httpx

from relay_core import webhooks as hooks
from relay_core.ports import FEED
from relay_core.services import Services
from relay_core.services.webhooks import FAN_OUT_BATCH, WEBHOOKS, Attempt, Outcome
from relay_server.background import on_one_instance

log = logging.getLogger("relay.webhooks")

# Requests in flight at once: in all, and to one endpoint.
IN_FLIGHT = 32
PER_ENDPOINT = 4
# The most of a receiver's answer read (and kept, shortened, as the delivery's last error).
READ_BYTES = 4096
KEPT_ERROR = 200
# How often the sender looks for due deliveries when nothing wakes it.
IDLE_SECONDS = 1.0
USER_AGENT = "Relay-Webhooks/1"


async def deliver(services: Services, standby: float = IDLE_SECONDS) -> None:
    """Deliver webhooks forever, from the one instance that holds the ``webhooks`` lock."""
    await on_one_instance(services.ctx.storage, "webhooks", lambda: Sender(services).run(), standby)


class Sender:
    """Fans the feed out to deliveries and attempts them as they fall due."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.config = services.ctx.config
        self.in_flight: dict[int, asyncio.Task[None]] = {}
        self.per_endpoint: Counter[int] = Counter()

    async def run(self) -> None:
        hub = self.services.ctx.storage.hub
        limits = httpx.Limits(max_connections=IN_FLIGHT, max_keepalive_connections=IN_FLIGHT)
        async with httpx.AsyncClient(
            limits=limits, follow_redirects=False, headers={"user-agent": USER_AGENT}
        ) as client:
            try:
                while not hub.closed:
                    # The feed wakes it only while some endpoint takes events (an endpoint's
                    # creation, a test or a retry wake it by WEBHOOKS).
                    active = await self.services.webhooks.active()
                    with hub.subscribe(*((FEED, WEBHOOKS) if active else (WEBHOOKS,))) as woken:
                        await self._round(client)
                        await woken.wait(IDLE_SECONDS)
            finally:
                for task in self.in_flight.values():
                    task.cancel()
                await asyncio.gather(*self.in_flight.values(), return_exceptions=True)

    async def _round(self, client: httpx.AsyncClient) -> None:
        """Fan out what the feed holds, then start what is due, as far as the limits allow."""
        while await self.services.webhooks.fan_out() == FAN_OUT_BATCH:
            pass
        free = IN_FLIGHT - len(self.in_flight)
        if free <= 0:
            return
        due = await self.services.webhooks.due(free, skip=frozenset(self.in_flight))
        for attempt in due:
            if self.per_endpoint[attempt.webhook_id] >= PER_ENDPOINT:
                continue
            self.per_endpoint[attempt.webhook_id] += 1
            task = asyncio.create_task(self._attempt(client, attempt))
            self.in_flight[attempt.delivery_id] = task

    async def _attempt(self, client: httpx.AsyncClient, attempt: Attempt) -> None:
        try:
            outcome = await self._send(client, attempt)
            await self.services.webhooks.attempted(attempt, outcome)
        except asyncio.CancelledError:
            raise
        except Exception:  # the delivery stays pending: the next round tries it again
            log.exception("webhook %s: delivery %s failed", attempt.webhook_id, attempt.delivery_id)
        finally:
            del self.in_flight[attempt.delivery_id]
            self.per_endpoint[attempt.webhook_id] -= 1
            self.services.ctx.storage.hub.publish((WEBHOOKS,))  # room for the next one

    async def _send(self, client: httpx.AsyncClient, attempt: Attempt) -> Outcome:
        """One attempt: the address checked again (DNS can change), the body signed now, the
        answer read up to ``READ_BYTES``."""
        if not self.config.webhooks_allow_private:
            refusal = await hooks.address_refusal(attempt.url)
            if refusal is not None:
                return Outcome(None, f"refused: {refusal}")
        if not attempt.secrets:
            return Outcome(None, "the secret does not open (rotate it)")
        timestamp = int(time.time())
        headers = {
            "webhook-id": attempt.message_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": hooks.signatures(
                attempt.secrets, attempt.message_id, timestamp, attempt.body
            ),
            "content-type": "application/json",
        }
        timeout = self.config.webhook_timeout_seconds
        try:
            async with asyncio.timeout(timeout):
                request = client.build_request(
                    "POST", attempt.url, content=attempt.body, headers=headers, timeout=timeout
                )
                response = await client.send(request, stream=True)
                try:
                    answer = await _read_some(response)
                finally:
                    await response.aclose()
        except TimeoutError:
            return Outcome(None, f"no answer within {timeout:g} s")
        except httpx.HTTPError as exc:
            host = urlsplit(attempt.url).hostname
            return Outcome(None, f"{type(exc).__name__} reaching {host}")
        if 200 <= response.status_code < 300:
            return Outcome(response.status_code)
        excerpt = answer.decode(errors="replace")[:KEPT_ERROR].strip()
        return Outcome(
            response.status_code,
            f"answered {response.status_code}" + (f": {excerpt}" if excerpt else ""),
            _retry_after(response.headers.get("retry-after")),
        )


async def _read_some(response: httpx.Response) -> bytes:
    """At most ``READ_BYTES`` of the answer's body."""
    read = b""
    async for chunk in response.aiter_raw():
        read += chunk
        if len(read) >= READ_BYTES:
            break
    return read[:READ_BYTES]


def _retry_after(value: str | None) -> float | None:
    """A ``Retry-After`` header's seconds (a number or an HTTP date), None when absent or
    unreadable."""
    if value is None:
        return None
    if value.strip().isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)
