"""Sends the outbox: webhook deliveries and the platforms' jobs (cards, their edits, reminders,
mirrored posts), in the background, on one instance at a time, a bounded number in flight per
endpoint and in all, so that a slow or dead endpoint or platform slows neither the API nor the
others, and only to a floor while the API keeps the process busy (``relay_server.pressure``).
What to send and how it went are the services' (``relay_core.services.webhooks`` and
``relay_core.services.outbox``, one retry schedule for both); this module signs, POSTs and
reads a webhook's answer, and runs a platform's job, one at a time for each card.

Outcomes are recorded a round at a time, in one transaction (a delivery stays in flight until
its outcome is kept, so it is never sent twice meanwhile; a crash before then sends it again,
with the same ``webhook-id``). aiohttp's client, not httpx: it costs the process a fraction of
the CPU time a request (docs/performance.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import Counter
from urllib.parse import urlsplit

import aiohttp

from relay_api.errors import NotFound, StorageUnavailable
from relay_api.headers import parse_retry_after
from relay_core import webhooks as hooks
from relay_core.auth import OPERATOR_CALLER
from relay_core.records import PlatformJob
from relay_core.services import Services
from relay_core.services.outbox import Outcome, job_key, showing
from relay_core.services.webhooks import A2APush, Attempt
from relay_core.topics import FEED, OUTBOX
from relay_server import pressure
from relay_server.background import on_one_instance
from relay_server.logs import log_outage
from relay_server.outbound import PublicResolver, literal_host
from relay_server.tracing import continuing, outbound

log = logging.getLogger("relay.webhooks")

# Requests in flight at once: in all, and to one endpoint.
IN_FLIGHT = 32
PER_ENDPOINT = 4
# The most of a receiver's answer read (and kept, shortened, as the delivery's last error).
READ_BYTES = 4096
KEPT_ERROR = 200
# How often the sender looks for due deliveries when nothing wakes it.
IDLE_SECONDS = 1.0
# While the API presses on the process (relay_server.pressure), the sender keeps to a floor: a
# round a pause at most, and this many requests in flight (docs/performance.md, "Figures behind
# the code").
PRESSED_IN_FLIGHT = 8
PRESSED_PAUSE = 0.1
USER_AGENT = "Relay-Webhooks/1"


async def send_outbox(services: Services, standby: float = IDLE_SECONDS) -> None:
    """Send the outbox forever, from the one instance that holds the ``outbox`` lock."""
    await on_one_instance(services.ctx.storage, "outbox", lambda: Sender(services).run(), standby)


class Sender:
    """Fans the feed out to deliveries, and attempts them and the platforms' jobs as they fall
    due."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.config = services.ctx.config
        self.in_flight: dict[int, asyncio.Task[None]] = {}
        self.per_endpoint: Counter[int] = Counter()
        # Attempts made whose outcome is not kept yet (their deliveries are still in flight).
        self.settled: list[tuple[Attempt, Outcome]] = []
        # The platforms' jobs in flight (in ``in_flight`` too: ids are the outbox's), by what
        # they are about, and those done whose outcome is not kept yet.
        self.jobs: dict[int, tuple[str, str, int]] = {}
        self.jobs_settled: list[tuple[PlatformJob, Outcome]] = []
        self.showing = bool(showing(services.ctx.bridges))
        self.following = True  # whether an endpoint is enabled, as the last round found
        self.pressed = False  # whether the API presses on the process, as the last round found
        self.ran_short = True  # whether the last round started all that was due

    async def run(self) -> None:
        hub = self.services.ctx.storage.hub
        # Outside RELAY_WEBHOOKS_ALLOW_PRIVATE, a host is resolved once per connection and only
        # the public addresses that check found are connected to (DNS rebinding finds nothing).
        resolver = None if self.config.webhooks_allow_private else PublicResolver()
        connector = aiohttp.TCPConnector(
            limit=IN_FLIGHT, limit_per_host=0, resolver=resolver, use_dns_cache=False
        )
        async with aiohttp.ClientSession(
            connector=connector,
            headers={"user-agent": USER_AGENT},
            auto_decompress=False,
            trace_configs=outbound("webhook"),
        ) as client:
            try:
                while not hub.closed:
                    # The feed wakes it only while some endpoint takes events, as the last
                    # round found (an endpoint's creation, a test, a retry or a platform's job
                    # wake it by OUTBOX).
                    topics = (FEED, OUTBOX) if self.following else (OUTBOX,)
                    with hub.subscribe(*topics) as woken:
                        try:
                            await self._round(client)
                        except StorageUnavailable as exc:
                            log_outage(exc.logged)
                        except Exception:  # the next round tries again
                            log.exception("outbox: a round failed")
                        if self.pressed:
                            await asyncio.sleep(PRESSED_PAUSE)
                        if not self.pressed or (not self.in_flight and self.ran_short):
                            await woken.wait(IDLE_SECONDS)
            finally:
                for task in self.in_flight.values():
                    task.cancel()
                await asyncio.gather(*self.in_flight.values(), return_exceptions=True)
                await self._keep_outcomes()

    async def _round(self, client: aiohttp.ClientSession) -> None:
        """Keep the outcomes of the attempts made since the last round, fan out a batch of the
        feed once what was fanned out before has started (the feed holds the rest), then start
        what is due, as far as the limits allow."""
        self.pressed = pressure.API.pressed()
        await self._keep_outcomes()
        if self.ran_short:
            self.following = await self.services.webhooks.fan_out()
        await self._start_jobs()
        free = (PRESSED_IN_FLIGHT if self.pressed else IN_FLIGHT) - len(self.in_flight)
        if free <= 0:
            return
        full = frozenset(
            hook for hook, sending in self.per_endpoint.items() if sending >= PER_ENDPOINT
        )
        due = await self.services.webhooks.due(free, skip=frozenset(self.in_flight), full=full)
        # With every endpoint busy, nothing is known of their backlogs: no batch for them.
        self.ran_short = len(due.attempts) < free and (due.endpoints > 0 or not full)
        for attempt in due.attempts:
            if self.per_endpoint[attempt.webhook_id] >= PER_ENDPOINT:
                continue
            self.per_endpoint[attempt.webhook_id] += 1
            task = asyncio.create_task(self._attempt(client, attempt))
            self.in_flight[attempt.delivery_id] = task

    async def _start_jobs(self) -> None:
        """Start the platforms' jobs that are due, as far as the limit allows: one at a time
        for each card (or thread), oldest first. With no platform that shows anything (the
        local one alone), there are none: no read."""
        free = (PRESSED_IN_FLIGHT if self.pressed else IN_FLIGHT) - len(self.in_flight)
        if free <= 0 or not self.showing:
            return
        busy = frozenset(self.jobs.values())
        for job in await self.services.outbox.due(free, busy):
            if job.delivery_id in self.in_flight:
                continue
            self.jobs[job.delivery_id] = job_key(job)
            task = asyncio.create_task(self._run_job(job))
            self.in_flight[job.delivery_id] = task

    async def _keep_outcomes(self) -> None:
        settled, self.settled = self.settled, []
        jobs, self.jobs_settled = self.jobs_settled, []
        if settled:
            try:
                await self.services.webhooks.attempted(settled)
            except Exception:  # still pending in the store: they are attempted again
                log.exception("webhooks: %d outcomes could not be kept", len(settled))
        if jobs:
            try:
                await self.services.outbox.attempted(jobs)
            except Exception:  # still pending in the store: they run again
                log.exception("outbox: %d platforms' outcomes could not be kept", len(jobs))
        for attempt, _ in settled:
            self.in_flight.pop(attempt.delivery_id, None)
        for job, _ in jobs:
            self.in_flight.pop(job.delivery_id, None)
            self.jobs.pop(job.delivery_id, None)

    async def _run_job(self, job: PlatformJob) -> None:
        try:
            outcome = await self.services.outbox.run(job)
            self.jobs_settled.append((job, outcome))
        except asyncio.CancelledError:
            raise
        except Exception:  # pending still: a later round runs it again
            log.exception("outbox: %s of %s on %s failed", job.kind, job.subject_id, job.bridge)
            self.in_flight.pop(job.delivery_id, None)
            self.jobs.pop(job.delivery_id, None)
        finally:
            self.services.ctx.storage.hub.publish((OUTBOX,))  # its outcome is kept next round

    async def _attempt(self, client: aiohttp.ClientSession, attempt: Attempt) -> None:
        try:
            outcome = await self._send(client, attempt)
            self.settled.append((attempt, outcome))  # the list of now: a round swaps it
        except asyncio.CancelledError:
            raise
        except Exception:  # pending still: a later round tries it again
            log.exception("webhook %s: delivery %s failed", attempt.webhook_id, attempt.delivery_id)
            self.in_flight.pop(attempt.delivery_id, None)
        finally:
            self.per_endpoint[attempt.webhook_id] -= 1
            # Room for more: a round once half the attempts in flight are done, however few they
            # are (rounds of one each would read and write for every delivery).
            if len(self.in_flight) - len(self.settled) <= len(self.in_flight) // 2:
                self.services.ctx.storage.hub.publish((OUTBOX,))

    async def _pushed(self, push: A2APush) -> str:
        """An A2A push notification's body: the task as it is now (a ``StreamResponse``)."""
        from relay_server.a2a import protocol

        shown = await self.services.a2a.conversation(OPERATOR_CALLER, push.agent_id, push.task_id)
        return json.dumps({"task": protocol.as_json(protocol.a2a_task(shown))})

    async def _send(self, client: aiohttp.ClientSession, attempt: Attempt) -> Outcome:
        """One attempt: the address checked again (DNS can change), the body signed now, the
        answer read up to ``READ_BYTES``."""
        if not self.config.webhooks_allow_private and literal_host(attempt.url):
            # A hostname is checked by PublicResolver as it is connected to.
            refusal = await hooks.address_refusal(attempt.url)
            if refusal is not None:
                return Outcome(None, f"refused: {refusal}")
        if not attempt.secrets:
            return Outcome(None, "the secret does not open (rotate it)")
        body, extra = attempt.body, {}
        if attempt.push is not None:
            try:
                body = await self._pushed(attempt.push)
            except NotFound:
                return Outcome(None, f"task {attempt.push.task_id} is no longer shown over A2A")
            extra = attempt.push.headers
        timestamp = int(time.time())
        headers = {
            "webhook-id": attempt.message_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": hooks.signatures(
                attempt.secrets, attempt.message_id, timestamp, body
            ),
            "content-type": "application/json",
            **extra,
        }
        timeout = self.config.webhook_timeout_seconds
        try:
            with continuing(attempt.traceparent) as handed_on:
                async with client.post(
                    attempt.url,
                    data=body.encode(),
                    headers=headers | handed_on,
                    allow_redirects=False,
                    timeout=aiohttp.ClientTimeout(total=timeout),
                ) as response:
                    status = response.status
                    answer = await response.content.read(READ_BYTES)
                    retry_after = response.headers.get("retry-after")
        except TimeoutError:
            return Outcome(None, f"no answer within {timeout:g} s")
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, hooks.AddressRefused):
                return Outcome(None, f"refused: {exc.os_error}")
            host = urlsplit(attempt.url).hostname
            return Outcome(None, f"{type(exc).__name__} reaching {host}")
        except aiohttp.ClientError as exc:
            host = urlsplit(attempt.url).hostname
            return Outcome(None, f"{type(exc).__name__} reaching {host}")
        if 200 <= status < 300:
            return Outcome(status)
        excerpt = answer.decode(errors="replace")[:KEPT_ERROR].strip()
        return Outcome(
            status,
            f"answered {status}" + (f": {excerpt}" if excerpt else ""),
            parse_retry_after(retry_after),
        )
