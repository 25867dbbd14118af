"""The email bridge against a real SMTP server on loopback (aiosmtpd, tests/smtp_server.py):
an approval as text and HTML with one-click decision links, each link read by the decision
page's API without deciding, then deciding once; the outcome and the reminder in the thread."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from relay_server.app_keys import SERVICES
from relay_server.bridges.email.sending import LINKS_HEADING, REQUEST_HEADING
from relay_server.settings import Settings
from tests.server.conftest import ONE_BACKEND, Api
from tests.smtp_server import PASSWORD, USER, Mailbox, body_of, relay_env, smtp_server

OPS = ("ops@example.com", "oncall@example.com")
PUBLIC = "https://relay.example.com"
LINK = re.compile(r"^(Approve|Reject|Answer '[^']+'): (\S+)$", re.MULTILINE)


@pytest.fixture
def mailbox(tmp_path: Path) -> Iterator[Mailbox]:
    with smtp_server(tmp_path) as box:
        yield box


def settings_of(box: Mailbox) -> dict[str, str]:
    """The app's settings, by their flag names, to mail ``OPS`` through ``box``."""
    env = relay_env(box, ",".join(OPS), PUBLIC)
    return {name.removeprefix("RELAY_").lower(): value for name, value in env.items()}


async def mailing(make_api: Any, box: Mailbox, **more: Any) -> Api:
    api: Api = await make_api(**settings_of(box), sweep_seconds=0, **more)
    await api.agent("ci-7")
    return api


def links_in(text: str) -> dict[str, str]:
    """Each link's label and the signed link, from its URL's fragment."""
    found = {}
    for label, url in LINK.findall(text):
        page, _, link = url.partition("#")
        assert page == f"{PUBLIC}/console/decide" and link
        found[label] = link
    return found


async def read(api: Api, link: str, expect: int = 200) -> Any:
    return await api.post("/v1/bridges/email/link", {"link": link}, token="", expect=expect)


def changed_signature(link: str) -> str:
    """``link`` with one character of its signature changed: one whose six bits all count, not
    the last (whose low bits base64 leaves unused, so changing it may change nothing)."""
    at = len(link) - 5
    return link[:at] + ("B" if link[at] == "A" else "A") + link[at + 1 :]


async def tap(api: Api, link: str, expect: int = 200) -> Any:
    return await api.post("/v1/bridges/email/decide", {"link": link}, token="", expect=expect)


async def test_an_approval_is_mailed_with_links_that_decide_only_when_tapped_and_once(
    make_api: Any, mailbox: Mailbox
) -> None:
    api = await mailing(make_api, mailbox)
    command = {"tool_name": "Bash", "tool_input": {"command": "npm test <b>&amp;"}}
    # A title is one line: no header can ride in it into the mail's subject.
    await api.post(
        "/v1/approvals",
        {"title": "Bash: npm test\nBcc: x@evil", "payload": command},
        as_="ci-7",
        expect=422,
    )
    asked = await api.post(
        "/v1/approvals",
        {"title": "Bash: npm test Bcc: x@evil", "payload": command},
        as_="ci-7",
        expect=201,
    )
    approval_id = asked["approval_id"]
    first, second = mailbox.wait_for(2)
    assert [first["To"], second["To"]] == list(OPS) and mailbox.logins == [USER, USER]
    assert first["Subject"] == f"Relay approval #{approval_id}: Bash: npm test Bcc: x@evil"
    assert first["Bcc"] is None and first["Auto-Submitted"] == "auto-generated"
    text, page = body_of(first), body_of(first, "html")
    assert "Command: npm test <b>&amp;" in text  # literal in text,
    assert "npm test &lt;b&gt;&amp;amp;" in page and "<b>" not in page  # escaped in HTML
    links = links_in(text)
    assert set(links) == {"Approve", "Reject"} and links != links_in(body_of(second))
    assert all(link in page for link in links.values())

    # Reading a link (what opening the page does) decides nothing.
    shown = await read(api, links["Approve"])
    assert shown["action"] == "Approve" and shown["recipient"] == OPS[0]
    assert shown["approval"]["status"] == "pending" and shown["approval"]["payload"] == command
    assert (await api.get(f"/v1/approvals/{approval_id}"))["status"] == "pending"

    # A forged or changed link is refused like a bad token; the page's tap decides, once.
    for bad in (
        "nothing",
        changed_signature(links["Approve"]),
        links["Approve"].replace(".", "!", 1),
    ):
        refused = await tap(api, bad, expect=401)
        assert refused["code"] == "unauthenticated"
    await api.post("/v1/bridges/email/decide", {"link": ""}, token="", expect=422)
    done = await tap(api, links["Approve"])
    assert done["approval"]["status"] == "approved"
    assert done["approval"]["decided_by"] == f"email:{OPS[0]}"
    again = await tap(api, links["Reject"])
    assert again["said"] == f"approval {approval_id} is already approved"
    assert again["approval"]["status"] == "approved"

    # The outcome reaches every address, in reply to its approval's email.
    outcomes = mailbox.wait_for(4)[2:]
    for sent, said in zip((first, second), outcomes, strict=True):
        assert said["In-Reply-To"] == sent["Message-ID"] and said["To"] == sent["To"]
        assert body_of(said).startswith(f"APPROVED by email:{OPS[0]}")


async def test_a_question_is_answered_by_its_option_link(make_api: Any, mailbox: Mailbox) -> None:
    api = await mailing(make_api, mailbox)
    options = [{"label": "Postgres"}, {"label": "SQLite"}]
    body = {"kind": "question", "title": "Which database?", "options": options}
    asked = await api.post("/v1/approvals", body, as_="ci-7", expect=201)
    links = links_in(body_of(mailbox.wait_for(1)[0]))
    assert set(links) == {"Answer 'Postgres'", "Answer 'SQLite'", "Reject"}
    assert (await read(api, links["Answer 'SQLite'"]))["action"] == "Answer 'SQLite'"
    done = await tap(api, links["Answer 'SQLite'"])
    assert done["approval"]["answer"] == ["SQLite"] and done["approval"]["status"] == "answered"
    several = await api.post("/v1/approvals", body | {"multiple": True}, as_="ci-7", expect=201)
    mailed = mailbox.wait_for(6)[4]  # after the first's two cards and two outcomes
    assert mailed["Subject"].startswith(f"Relay approval #{several['approval_id']}")
    assert set(links_in(body_of(mailed))) == {"Reject"}  # several: in the console
    assert f"{PUBLIC}/console#approvals/{several['approval_id']}" in body_of(mailed)
    assert asked["approval_id"] != several["approval_id"]


async def test_a_link_stops_with_its_approval_and_a_reminder_comes_in_the_thread(
    make_api: Any, mailbox: Mailbox
) -> None:
    api = await mailing(make_api, mailbox, remind_after=60)
    asked = await api.post(
        "/v1/approvals", {"title": "Deploy", "expires_in": 120}, as_="ci-7", expect=201
    )
    first = mailbox.wait_for(2)[0]
    links = links_in(body_of(first))
    api.clock.advance(61)
    assert await api.client.server.app[SERVICES].approvals.sweep() == 1
    await api.sent()
    reminder = mailbox.wait_for(4)[2]
    assert reminder["In-Reply-To"] == first["Message-ID"]
    assert body_of(reminder).startswith(f"Reminder: approval #{asked['approval_id']} from ci-7")
    assert set(links_in(body_of(reminder))) == {"Approve", "Reject"}
    api.clock.advance(60)
    refused = await read(api, links["Approve"], expect=401)
    assert "expired" in refused["detail"]
    expired = await api.get(f"/v1/approvals/{asked['approval_id']}")
    assert (expired["status"], expired["decided_by"]) == ("expired", "deadline")


@ONE_BACKEND
async def test_implicit_tls_and_a_refused_login_that_names_no_secret(
    make_api: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with smtp_server(tmp_path, security="tls") as box:
        api = await mailing(make_api, box, email_smtp_security="tls")
        await api.post("/v1/approvals", {"title": "over TLS"}, as_="ci-7", expect=201)
        assert box.wait_for(2)[0]["Subject"].endswith("over TLS")
        caplog.set_level(logging.DEBUG)
        wrong = await make_api(
            **settings_of(box)
            | {"email_smtp_security": "tls", "email_smtp_password": "wrong-password-never-shown"}
        )
        await wrong.agent("ci-8")
        sent = await wrong.post("/v1/notify", {"text": "are you there?"}, as_="ci-8", expect=502)
        assert sent["detail"] == "the SMTP server refused the email (535)"
    assert "wrong-password-never-shown" not in caplog.text and PASSWORD not in caplog.text


def test_email_settings_say_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="http:// or https:// URL with a host"):
        Settings(email={"public_url": "relay.example.com"})
    with pytest.raises(ValueError, match="names 'email', which is not a configured platform"):
        Settings(email={"smtp_host": "mail"}, domain={"escalation": "email"})


async def test_an_agents_text_cannot_pose_as_relays_links_in_the_text_part(
    make_api: Any, mailbox: Mailbox
) -> None:
    """Relay's links come first under their own heading; every line of the request (its
    detail with a forged ``Approve:`` line among them) is quoted below them."""
    api = await mailing(make_api, mailbox)
    forged = "build ok\nApprove: http://evil.example/approve\r\nReject: http://evil.example/r"
    await api.post("/v1/approvals", {"title": "Deploy 7", "detail": forged}, as_="ci-7", expect=201)
    first, _ = mailbox.wait_for(2)
    text = body_of(first)
    assert text.startswith(LINKS_HEADING + "\n")
    assert set(links_in(text)) == {"Approve", "Reject"}  # Relay's, signed: not the forged
    request = text.split(REQUEST_HEADING + "\n", 1)[1].splitlines()
    assert request and all(line.startswith("> ") for line in request)
    assert "> Approve: http://evil.example/approve" in request
    assert not any(line.startswith("Approve: http://evil") for line in text.splitlines())
