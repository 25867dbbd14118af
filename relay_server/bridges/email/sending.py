"""Email for the operator: SMTP out (aiosmtplib, with STARTTLS or TLS), nothing read back.

Each approval is one email per operator address, as text and as HTML, with one-click decision
links (``links``): a link opens the console's decision page, which shows the whole request and
decides only when tapped (a GET never decides: mail scanners open links). An approval's emails
share a thread: its reminder and its outcome are new emails in reply to the first, since an
email cannot be edited. A notification is an email too; replies to emails are not read.

The SMTP password never reaches a log line or an error: a failure is said by its kind.
"""

from __future__ import annotations

import html
import ssl
import uuid
from collections.abc import Sequence
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path
from typing import Literal

import aiosmtplib

from relay_api import models as m
from relay_api.elision import elide
from relay_api.errors import BridgeError
from relay_core.ports import BridgeCapabilities
from relay_server.bridges.email.links import decisions, label, make_link
from relay_server.bridges.wording import describe, outcome, reminder
from relay_server.tracing import platform_call

Security = Literal["starttls", "tls", "none"]
SUBJECT = 150  # characters of an agent's title in a subject line
TIMEOUT = 30.0  # seconds an SMTP exchange may take


# The text part: Relay's links under a heading of their own, first; then the request, every
# line of it quoted, so that no text an agent wrote (a detail with "Approve: http://…") reads
# as one of Relay's lines.
LINKS_HEADING = "Decide with Relay's links (each opens a page that asks for one tap):"
REQUEST_HEADING = "The request (quoted as the agent sent it):"


def quoted(text: str) -> str:
    """Every line of ``text`` behind "> ", as mail quotes."""
    return "\n".join(f"> {line}" for line in text.splitlines())


def _one_line(text: str) -> str:
    """``text`` fit for a header: control characters (a line break among them) as spaces."""
    return "".join(ch if ch.isprintable() else " " for ch in text)


class EmailBridge:
    """Sends to the operator's addresses through one SMTP server."""

    name = "email"
    capabilities = BridgeCapabilities(topics=False, replies=False)

    def __init__(
        self,
        *,
        host: str,
        port: int,
        security: Security,
        sender: str,
        recipients: Sequence[str],
        public_url: str,
        secret: bytes,
        username: str | None = None,
        password: str | None = None,
        ca_file: Path | None = None,
    ) -> None:
        self.host, self.port, self.security = host, port, security
        self.sender, self.recipients = sender, tuple(recipients)
        self.public_url = public_url.rstrip("/")
        self._secret = secret
        self._login = (username, password) if username is not None else None
        self._tls = ssl.create_default_context(cafile=str(ca_file) if ca_file else None)
        self._domain = sender.rpartition("@")[2] or "relay.invalid"

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def _send(self, message: EmailMessage) -> None:
        with platform_call("email", "send"):
            await self._submit(message)

    async def _submit(self, message: EmailMessage) -> None:
        username, password = self._login or (None, None)
        try:
            await aiosmtplib.send(
                message,
                hostname=self.host,
                port=self.port,
                username=username,
                password=password,
                use_tls=self.security == "tls",
                start_tls=self.security == "starttls",
                tls_context=self._tls,
                timeout=TIMEOUT,
            )
        except aiosmtplib.SMTPResponseException as exc:
            raise BridgeError(f"the SMTP server refused the email ({exc.code})") from None
        except (aiosmtplib.SMTPException, OSError, ssl.SSLError) as exc:
            raise BridgeError(f"cannot send email ({type(exc).__name__})") from None

    def _message(
        self, to: str, subject: str, text: str, html_body: str | None, thread: str | None
    ) -> EmailMessage:
        message = EmailMessage()
        message["From"] = self.sender
        message["To"] = to
        message["Subject"] = _one_line(subject)
        message["Date"] = formatdate(localtime=False, usegmt=True)
        message["Message-ID"] = f"<{uuid.uuid4().hex}@{self._domain}>"
        if thread is not None:
            message["In-Reply-To"] = message["References"] = thread
        message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation replies
        message.set_content(text)
        if html_body is not None:
            message.add_alternative(html_body, subtype="html")
        return message

    def _thread(self, platform_message_id: str, index: int) -> str:
        """The Message-ID of the approval's first email to the ``index``-th address."""
        return f"<{platform_message_id}.{index}@{self._domain}>"

    async def send(self, text: str, *, reference: str) -> str:
        subject = f"Relay: {elide(text.splitlines()[0] if text else '', SUBJECT)}"
        for to in self.recipients:
            await self._send(self._message(to, subject, text, None, None))
        return f"email-{reference}"

    async def ensure_topic(self, room: m.Room, space: m.Space | None) -> str:
        raise BridgeError("email has no threads for rooms: Relay mails the operator only")

    async def mirror(self, platform_thread_id: str, text: str) -> None:
        raise BridgeError("email has no threads for rooms: Relay mails the operator only")

    async def ask(self, approval: m.Approval) -> str | None:
        """One email per address, each with links signed for it; the thread's id."""
        base = f"relay-approval-{approval.approval_id}.{uuid.uuid4().hex[:12]}"
        for index, to in enumerate(self.recipients):
            message = self._card(approval, to, None)
            message.replace_header("Message-ID", self._thread(base, index))
            await self._send(message)
        return base

    def _card(
        self, approval: m.Approval, to: str, thread: str | None, lead: str = ""
    ) -> EmailMessage:
        """The approval's email to ``to``: the card, and its decision links."""
        card = describe(approval, 20000)
        links = self._links(approval, to)
        console = f"{self.public_url}/console#approvals/{approval.approval_id}"
        lines = [LINKS_HEADING, *(f"{said}: {url}" for said, url in links)]
        lines.append(f"Or decide in the console: {console}")
        request = f"{REQUEST_HEADING}\n{quoted(card)}"
        text = "\n\n".join(part for part in (lead, "\n".join(lines), request) if part)
        buttons = "".join(
            f'<p><a href="{html.escape(url)}" style="font-weight:600">{html.escape(said)}</a></p>'
            for said, url in links
        )
        page = (
            (f"<p>{html.escape(lead)}</p>" if lead else "")
            + f"{buttons}"
            + f'<p><a href="{html.escape(console)}">Or decide in the console</a></p>'
            + "<p>Each link opens a page that shows the request and asks for one tap.</p>"
            + f'<pre style="white-space:pre-wrap">{html.escape(card)}</pre>'
        )
        subject = f"Relay approval #{approval.approval_id}: {elide(approval.title, SUBJECT)}"
        return self._message(to, subject, text, page, thread)

    def _links(self, approval: m.Approval, to: str) -> list[tuple[str, str]]:
        """Each decision a link makes, as its label and URL (the link in the fragment)."""
        page = f"{self.public_url}/console/decide#"
        return [
            (label(approval, verb), page + make_link(self._secret, approval, verb, to))
            for verb in decisions(approval)
        ]

    async def settle(self, platform_message_id: str, approval: m.Approval) -> None:
        """The outcome, in reply to the approval's email (an email cannot be changed)."""
        said = outcome(approval)
        subject = f"Re: Relay approval #{approval.approval_id}: {elide(approval.title, SUBJECT)}"
        done = "Nothing more to do: its links no longer decide."
        text = f"{said}\n\n{done}\n\n{REQUEST_HEADING}\n{quoted(describe(approval, 20000))}"
        for index, to in enumerate(self.recipients):
            thread = self._thread(platform_message_id, index)
            await self._send(self._message(to, subject, text, None, thread))

    async def remind(self, platform_message_id: str, approval: m.Approval) -> None:
        """The reminder, in reply to the approval's email, with the card and its links again."""
        for index, to in enumerate(self.recipients):
            thread = self._thread(platform_message_id, index)
            await self._send(self._card(approval, to, thread, lead=reminder(approval)))

    async def answered(self, platform_message_id: str, text: str, answer: str) -> None:
        return None  # replies to emails are not read: nothing answers a notification here
