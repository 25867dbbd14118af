"""One-click decision links: what a link in an approval's email may do, signed by the server.

A link names one approval, one decision (``approve``, ``reject``, ``answer:<index>``), the
address it was mailed to, and when it stops working: the approval's deadline, and at most
``LINK_DAYS`` after the approval was asked. It is signed (HMAC-SHA256, itsdangerous) with a
key derived from the server's secret, which every instance shares, so any instance reads it
and nobody can forge or change one. It carries no token: it can do this one thing to this
one approval, once (the approval is decided by the first tap; a later one finds it decided).
The link rides in the URL's fragment (``/console/decide#<link>``), which a browser never
sends to a server, so no access log, proxy or mail scanner's request holds it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from itsdangerous import BadSignature, URLSafeSerializer

from relay_api import models as m

LINK_DAYS = 7  # the longest a link works, for an approval without a deadline
SALT = "relay.email.decision"  # links' signatures are good for nothing else
VERBS = ("approve", "reject")  # and "answer:<index>", a question's option


@dataclass(frozen=True)
class Link:
    """What a decision link may do."""

    approval_id: int
    verb: str
    recipient: str
    until: datetime


class BadLink(Exception):
    """A link that is not one of this server's, or is past its time."""


def _serializer(secret: bytes) -> URLSafeSerializer:
    return URLSafeSerializer(secret, salt=SALT, signer_kwargs={"digest_method": hashlib.sha256})


def make_link(secret: bytes, approval: m.Approval, verb: str, recipient: str) -> str:
    """The signed link for ``verb`` on ``approval``, mailed to ``recipient``."""
    until = approval.created_at + timedelta(days=LINK_DAYS)
    if approval.expires_at is not None:
        until = min(until, approval.expires_at)
    data = [approval.approval_id, verb, recipient, int(until.timestamp())]
    return str(_serializer(secret).dumps(data))


def read_link(secret: bytes, text: str, now: datetime) -> Link:
    """What a link may do, if this server signed it and its time has not passed; else
    BadLink."""
    try:
        data = _serializer(secret).loads(text[:4000])
        approval_id, verb, recipient, until = data
        link = Link(int(approval_id), str(verb), str(recipient), datetime.fromtimestamp(until, UTC))
    except (BadSignature, ValueError, TypeError, OverflowError, OSError) as exc:
        raise BadLink("this link is not one of this Relay's: open the console instead") from exc
    if not (link.verb in VERBS or link.verb.startswith("answer:")):
        raise BadLink("this link decides nothing")
    if link.until <= now:
        raise BadLink("this link has expired: open the console instead")
    return link


def decisions(approval: m.Approval) -> list[str]:
    """The decisions a link may make on ``approval``: approve or reject a request; reject a
    question, or answer it with one option (several, or the operator's own words, are
    answered in the console)."""
    if approval.kind != "question":
        return ["approve", "reject"]
    if approval.multiple or approval.allow_other:
        return ["reject"]
    return [*(f"answer:{n}" for n in range(len(approval.options or []))), "reject"]


def label(approval: m.Approval, verb: str) -> str:
    """What a link's decision says to the operator: ``Approve``, ``Answer 'Postgres'``."""
    if verb.startswith("answer:"):
        index, options = verb.removeprefix("answer:"), approval.options or []
        chosen = options[int(index)].label if index.isdigit() and int(index) < len(options) else "?"
        return f"Answer {chosen!r}"
    return verb.capitalize()
