"""A human in the loop for the operator's decisions: an LLM proposes, the human confirms.

An LLM given the operator's tools could approve, reject or change a policy with no one looking.
Each of those tools asks the human first, through the client's form elicitation (the SDK's
``Resolve``/``Elicit``: a request to the client on the 2025 revisions, an ``input_required``
round on 2026-07-28), with what is being decided; a declined or cancelled form changes nothing.
A client that cannot ask its human is refused, unless the operator opted out knowingly
(``relay mcp --operator-without-confirmation``, ``RELAY_MCP_OPERATOR_WITHOUT_CONFIRMATION``).
"""

from __future__ import annotations

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit
from pydantic import BaseModel, Field

# The first revision whose tool calls carry elicitation as an ``input_required`` round, which
# a stateless door (``/mcp``) can answer too.
INPUT_REQUIRED_REVISION = "2026-07-28"
OPT_OUT = (
    "relay mcp --operator-without-confirmation (stdio), "
    "RELAY_MCP_OPERATOR_WITHOUT_CONFIRMATION=true (/mcp)"
)


class Confirmation(BaseModel):
    """The form the human answers."""

    confirm: bool = Field(title="Go ahead", description="yes: do it; no: change nothing")


class Refused(ToolError):
    """A tool call refused as Relay refuses: a ``code`` and a ``detail`` for the model."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


def confirming(ctx: Context) -> bool:
    """Whether this server asks the human before a decision (not opted out)."""
    return bool(getattr(ctx.mcp_server, "confirm_decisions", True))


def can_ask(ctx: Context) -> bool:
    """Whether the client can put a form before its human in this call: it declared form
    elicitation, and the call can carry the question (a request on the call's own stream, or
    an ``input_required`` round)."""
    capabilities = ctx.client_capabilities
    asks = capabilities.elicitation if capabilities is not None else None
    if asks is None or (asks.form is None and asks.url is not None):
        return False
    rounds = (ctx.protocol_version or "") >= INPUT_REQUIRED_REVISION
    return rounds or ctx.request_context.session.can_send_request


def ask(ctx: Context, question: str) -> Elicit[Confirmation] | Confirmation:
    """What a decision's resolver answers: the question for the human, or (opted out) a
    confirmation given in advance. A client that cannot ask is refused."""
    if not confirming(ctx):
        return Confirmation(confirm=True)
    if not can_ask(ctx):
        raise Refused(
            "confirmation_required",
            "this decision needs the human's confirmation and this client cannot ask for it "
            f"(no form elicitation); decide from the CLI or console, or opt out: {OPT_OUT}",
        )
    return Elicit(question, Confirmation)


def require_confirmed(outcome: ElicitationResult[Confirmation], what: str) -> None:
    """Go on only if the human confirmed ``what``; otherwise nothing changes."""
    if isinstance(outcome, AcceptedElicitation) and outcome.data.confirm:
        return
    said = "cancelled" if outcome.action == "cancel" else "declined"
    raise Refused("declined", f"the operator {said} {what}; nothing changed")
