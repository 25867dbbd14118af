"""The way back in from an approval's email: the console's decision page (``/console/decide``)
reads a link (``POST /v1/bridges/email/link``: what it would do, and the whole request), and
decides with it only when the operator taps (``POST /v1/bridges/email/decide``). Opening the
page decides nothing. A link that is not this server's, or is past its time, is refused like
a bad token: 401, audited, and counted against its address's refusal limit.
"""

from __future__ import annotations

from typing import Annotated, Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, StringConstraints

from relay_api.errors import AuthenticationError
from relay_core.auth import OPERATOR_CALLER
from relay_server.app_keys import REFUSALS, SERVICES
from relay_server.bridges.decisions import pressed
from relay_server.bridges.email.links import BadLink, Link, label, read_link
from relay_server.bridges.email.sending import EmailBridge
from relay_server.middleware import error_response
from relay_server.validation import parse_body


class LinkBody(BaseModel):
    """A decision link, as the page read it from its URL's fragment."""

    model_config = ConfigDict(extra="forbid")

    link: Annotated[str, StringConstraints(min_length=1, max_length=4000)]


async def _read(request: web.Request) -> Link | web.Response:
    """The link the request carries, if this server signed it and it still works; else the
    answer refusing it."""
    services = request.app[SERVICES]
    if not isinstance(services.ctx.bridge_named(EmailBridge.name), EmailBridge):
        return error_response(404, "not_found", "the email bridge is not configured")
    request.app[REFUSALS].check(request)  # an address past its refusals: 429, no checking
    body = await parse_body(request, LinkBody)
    secret = services.ctx.config.server_secret.get_secret_value()
    try:
        return read_link(secret, body.link, services.ctx.clock())
    except BadLink as exc:
        raise AuthenticationError(str(exc)) from None


async def shown(request: web.Request) -> web.Response:
    """POST /v1/bridges/email/link: what the link would do, and the approval it names, whole."""
    link = await _read(request)
    if isinstance(link, web.Response):
        return link
    approval = await request.app[SERVICES].approvals.show(OPERATOR_CALLER, link.approval_id)
    answer: dict[str, Any] = {
        "action": label(approval, link.verb),
        "recipient": link.recipient,
        "approval": approval.model_dump(mode="json"),
    }
    return web.json_response(answer)


async def decided(request: web.Request) -> web.Response:
    """POST /v1/bridges/email/decide: the operator's tap; how it went, and the approval."""
    link = await _read(request)
    if isinstance(link, web.Response):
        return link
    services = request.app[SERVICES]
    said = await pressed(services, link.approval_id, link.verb, f"email:{link.recipient}")
    approval = await services.approvals.show(OPERATOR_CALLER, link.approval_id)
    return web.json_response({"said": said, "approval": approval.model_dump(mode="json")})
