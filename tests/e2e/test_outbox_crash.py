"""A decision answers once it is committed, and its card is edited afterwards through the
outbox, even across a kill -9 between the commit and the edit: ``relay serve`` with Slack (a
fake Web API in this process), the card's edit held at the platform, the server killed and
started again on the same database."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from aiohttp import web

from tests.e2e.test_crash import Restartable
from tests.server.fake_slack import BOT_TOKEN, CHANNEL, SIGNING_SECRET, FakeSlack


class HeldSlack(FakeSlack):
    """Slack's Web API whose ``chat.update`` waits while ``held`` (the edit in flight)."""

    def __init__(self) -> None:
        super().__init__()
        self.held = threading.Event()
        self.edits_begun = 0

    async def handle(self, request: web.Request) -> web.Response:
        if request.match_info["method"] == "chat.update":
            self.edits_begun += 1
            while self.held.is_set():
                await asyncio.sleep(0.05)
        return await super().handle(request)


@contextmanager
def serving(fake: FakeSlack) -> Iterator[str]:
    """``fake`` served on a thread of its own; its API's base URL."""
    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_post("/api/{method}", fake.handle)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/api/"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()


def wait_for(found: Any, what: str, seconds: float = 20) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := found():
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {seconds} s")


def test_a_card_is_edited_after_a_kill_between_the_commit_and_the_edit(tmp_path: Path) -> None:
    fake = HeldSlack()
    with serving(fake) as api_url:
        server = Restartable(
            tmp_path,
            RELAY_SLACK_BOT_TOKEN=BOT_TOKEN,
            RELAY_SLACK_SIGNING_SECRET=SIGNING_SECRET,
            RELAY_SLACK_CHANNEL=CHANNEL,
            RELAY_SLACK_API_URL=api_url,
        )
        server.start()
        try:
            operator = (server.data_dir / "operator_token").read_text().strip()
            op = {"Authorization": f"Bearer {operator}"}
            registered = httpx.post(
                f"{server.url}/v1/agents/register", json={"agent_id": "builder"}, headers=op
            ).json()
            agent = {"Authorization": f"Bearer {registered['token']}"}
            asked = httpx.post(
                f"{server.url}/v1/approvals", json={"title": "Deploy build 7"}, headers=agent
            ).json()
            card = wait_for(lambda: fake.posted, "the card posted")[0]
            fake.held.set()  # the edit hangs at the platform: after the commit, before the edit
            decided = httpx.post(
                f"{server.url}/v1/approvals/{asked['approval_id']}/approve",
                json={"note": "ship it"},
                headers=op,
                timeout=10,
            )
            assert decided.status_code == 200 and decided.json()["status"] == "approved"
            assert fake.called("chat.update") == []  # answered before any edit was done
            wait_for(lambda: fake.edits_begun, "the edit begun")
            server.kill()
            fake.held.clear()
            edits_before = len(fake.called("chat.update"))
            server.start()

            def edited() -> list[dict[str, Any]]:
                return fake.called("chat.update")[edits_before:]

            [edit, *_] = wait_for(edited, "the card edited after the restart")
            assert edit["ts"] == card and "approved" in edit["text"].lower()
        finally:
            server.stop()
