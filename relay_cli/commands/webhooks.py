"""``relay webhooks list|show|create|replace|disable|enable|rotate-secret|test|deliveries|
retry``."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_api import operations as ops
from relay_cli._common import JsonOutput, call, render
from relay_cli.listing import list_command

app = typer.Typer(
    help="Webhooks: endpoints Relay POSTs events to, signed (Standard Webhooks), retried.",
    no_args_is_help=True,
)

WebhookId = Annotated[int, typer.Argument(help="The endpoint.")]
Url = Annotated[str, typer.Argument(help="Where to POST events: an http(s) URL.")]
Events = Annotated[
    list[str] | None,
    typer.Option(
        "--event",
        help="An event type to deliver, '*' inside as a wildcard (approval.*); repeat it for "
        "more; none: every event.",
    ),
]
Description = Annotated[str | None, typer.Option(help="What it is for.")]


app.command("list")(
    list_command(
        ops.WEBHOOKS_LIST,
        columns=("webhook_id", "url", "events", "enabled", "disabled_reason"),
        doc="""List endpoints, oldest first.

Example: relay webhooks list""",
    )
)


@app.command()
def show(ctx: typer.Context, webhook_id: WebhookId, as_json: JsonOutput = False) -> None:
    """Show an endpoint (never its secret).

    Example: relay webhooks show 1
    """
    render(call(ctx, lambda c: c.webhooks.show(webhook_id)), as_json)


def _secret_line(secret: str | None) -> str:
    return f"Signing secret (shown this once; keep it with the receiver): {secret}"


@app.command()
def create(
    ctx: typer.Context,
    url: Url,
    event: Events = None,
    description: Description = None,
    as_json: JsonOutput = False,
) -> None:
    """Create an endpoint: from now on, the events it takes are POSTed to it. Its signing
    secret is shown this once.

    Example: relay webhooks create https://ci.example.com/relay --event 'approval.*'
    """
    made = call(ctx, lambda c: c.webhooks.create(url, events=event, description=description))
    render(
        made, as_json, headline=f"Webhook {made.webhook_id} created. {_secret_line(made.secret)}"
    )


@app.command()
def replace(
    ctx: typer.Context,
    webhook_id: WebhookId,
    url: Url,
    event: Events = None,
    description: Description = None,
    as_json: JsonOutput = False,
) -> None:
    """Replace an endpoint's URL, events and description (its secret stays).

    Example: relay webhooks replace 1 https://ci.example.com/relay --event 'task.*'
    """
    changed = call(
        ctx,
        lambda c: c.webhooks.replace(webhook_id, url, events=event, description=description),
    )
    render(changed, as_json)


@app.command()
def disable(ctx: typer.Context, webhook_id: WebhookId, as_json: JsonOutput = False) -> None:
    """Stop delivering to an endpoint (what is pending waits; events meanwhile are not sent).

    Example: relay webhooks disable 1
    """
    render(call(ctx, lambda c: c.webhooks.disable(webhook_id)), as_json)


@app.command()
def enable(ctx: typer.Context, webhook_id: WebhookId, as_json: JsonOutput = False) -> None:
    """Deliver to an endpoint again: what was pending, and the events from now on.

    Example: relay webhooks enable 1
    """
    render(call(ctx, lambda c: c.webhooks.enable(webhook_id)), as_json)


@app.command("rotate-secret")
def rotate_secret(ctx: typer.Context, webhook_id: WebhookId, as_json: JsonOutput = False) -> None:
    """Give an endpoint a new signing secret, shown this once; deliveries are signed with the
    old one too for 24 hours (RELAY_WEBHOOK_SECRET_OVERLAP_SECONDS).

    Example: relay webhooks rotate-secret 1
    """
    rotated = call(ctx, lambda c: c.webhooks.rotate_secret(webhook_id))
    render(rotated, as_json, headline=_secret_line(rotated.secret))


@app.command()
def test(ctx: typer.Context, webhook_id: WebhookId, as_json: JsonOutput = False) -> None:
    """Send an endpoint a webhook.test event now.

    Example: relay webhooks test 1
    """
    sent = call(ctx, lambda c: c.webhooks.test(webhook_id))
    headline = f"Delivery {sent.delivery_id} ({sent.message_id}) is on its way"
    render(sent, as_json, headline=headline)


app.command("deliveries")(
    list_command(
        ops.WEBHOOKS_DELIVERIES,
        columns=(
            "delivery_id",
            "event_type",
            "status",
            "attempts",
            "last_status_code",
            "next_attempt_at",
            "last_error",
        ),
        doc="""List an endpoint's deliveries, newest first.

Example: relay webhooks deliveries 1 --status failed""",
    )
)


@app.command()
def retry(
    ctx: typer.Context,
    webhook_id: WebhookId,
    delivery_id: Annotated[int, typer.Argument(help="The failed delivery.")],
    as_json: JsonOutput = False,
) -> None:
    """Send a failed delivery again (its attempts start over; its webhook-id stays).

    Example: relay webhooks retry 1 42
    """
    render(call(ctx, lambda c: c.webhooks.retry(webhook_id, delivery_id)), as_json)
