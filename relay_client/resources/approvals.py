"""``client.approvals``: the generated methods, and ``ask``, a question with options written by
hand on top of the request they share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from relay_api import models as m
from relay_api import operations as ops
from relay_client._base import wire
from relay_client._flow import C, Send, flow_method
from relay_client.resources import _generated


class Approvals(_generated.Approvals[C]):
    """``client.approvals``."""

    @flow_method
    def ask(
        self,
        question: str,
        options: Sequence[str | m.QuestionOption],
        *,
        detail: str | None = None,
        payload: dict[str, Any] | None = None,
        multiple: bool = False,
        allow_other: bool = False,
        expires_in: int | None = None,
        remind_after: int | None = None,
        escalate_after: int | None = None,
    ) -> Send[m.Approval]:
        """Ask the operator a question with 2 to 10 options (labels, or labels with a
        description); its answer is the approval's ``answer`` once it is ``answered`` (wait
        for it with ``show(approval_id, wait=…)``)."""
        offered = [m.QuestionOption(label=o) if isinstance(o, str) else o for o in options]
        return Send(
            ops.APPROVALS_REQUEST,
            json=wire(
                kind="question",
                title=question,
                detail=detail,
                payload=payload,
                options=offered,
                multiple=multiple,
                allow_other=allow_other,
                expires_in=expires_in,
                remind_after=remind_after,
                escalate_after=escalate_after,
            ),
        )
