"""``relay connect``, ``relay disconnect`` and ``relay doctor``: a coding agent wired to Relay in
one command, unwired in another, and checked.

``connect`` gives the agent an identity (registered with the operator's rights, else enrolled
and waited for until the operator approves) kept in Relay's identity file (0600, the user's
config directory), then writes the host's hooks and MCP server (``relay_cli.host_settings``),
and ends with ``doctor``. What each file held before is kept in the user's state directory, so
``disconnect`` gives it back as it was (or, where the file changed since, takes out only
Relay's entries).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import socket
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from platformdirs import user_state_dir

from relay_api.models import OPERATOR
from relay_cli.connection import Connection
from relay_cli.host_settings import Host, SettingsError, Wiring
from relay_client import RelayClient, errors
from relay_client.config import ClientConfig, kept_token
from relay_client.identity import Identity, forget, identity_path, keep
from relay_client.kept_files import write_json

HostArgument = Annotated[Host, typer.Argument(help="claude-code or codex.")]
UserOption = Annotated[
    bool,
    typer.Option("--user", help="For every project of this user (else: this project)."),
]


def connect(
    ctx: typer.Context,
    host: HostArgument,
    user: UserOption = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the changes; write nothing.")
    ] = False,
    wait: Annotated[
        int, typer.Option(help="Seconds to wait for the operator to approve an enrollment.")
    ] = 3600,
) -> None:
    """Connect a coding agent to Relay: an identity for it, its hooks and its MCP server.

    Run it in the project (or with --user for all of them). With the operator's rights (on
    the server's machine, or with the operator's token) it registers the agent; without, it
    enrolls and waits for the operator to approve. The agent's token stays in Relay's identity
    file, never in the host's settings. It ends with relay doctor.

    Example: relay --agent builder connect claude-code
    """
    conn: Connection = ctx.obj or Connection()
    wiring = _wiring(conn, host, user)
    changes = _planned(wiring)
    if dry_run:
        for path, (before, after) in changes.items():
            sys.stdout.writelines(_diff(path, before, after))
        if not kept_token(wiring.url, wiring.agent):
            typer.echo(f"and an identity for agent {wiring.agent} at {wiring.url}")
        return
    _identify(conn, wiring, wait)
    record = _record_path(wiring)
    kept = _load_record(record)
    for path, (before, after) in changes.items():
        if before != after:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(after)
            typer.echo(f"wrote {path}")
        recorded = kept.get(str(path))
        if recorded is not None and recorded["after"] == before:
            recorded["after"] = after  # as connect left it: what it was before stays kept
        else:  # what it would be without Relay's entries is what disconnect gives back
            original = before if before != after else wiring.disconnected(path, after)
            kept[str(path)] = {"before": original, "after": after}
    write_json(record, kept)
    if host == "claude-code":
        typer.echo(
            "To hear Relay in a running session (a channel), start Claude Code with: claude"
            " --dangerously-load-development-channels server:relay"
        )
    raise typer.Exit(_doctor(wiring, as_json=False))


def disconnect(
    ctx: typer.Context,
    host: HostArgument,
    user: UserOption = False,
    forget_token: Annotated[
        bool, typer.Option("--forget", help="Also forget the agent's kept token.")
    ] = False,
) -> None:
    """Take out what relay connect wrote for this host: each file as it was before, or (where
    it changed since) without Relay's entries.

    Example: relay --agent builder disconnect claude-code --forget
    """
    conn: Connection = ctx.obj or Connection()
    wiring = _wiring(conn, host, user)
    record = _record_path(wiring)
    kept = _load_record(record)
    for path in wiring.files():
        now = path.read_text() if path.exists() else None
        was = kept.get(str(path))
        if now is None:
            continue
        if was is not None and was["after"] == now:
            restored = was["before"]
        else:
            try:
                restored = wiring.disconnected(path, now)
            except SettingsError as exc:
                typer.echo(f"Error: {exc}", err=True)
                raise typer.Exit(1) from None
        if restored is None:
            path.unlink()
            typer.echo(f"removed {path}")
        elif restored != now:
            path.write_text(restored)
            typer.echo(f"restored {path}")
    record.unlink(missing_ok=True)
    if forget_token:
        forget(identity_path(wiring.url, wiring.agent))
        typer.echo(f"forgot agent {wiring.agent}'s token")


def doctor(
    ctx: typer.Context,
    host: Annotated[Host | None, typer.Argument(help="claude-code or codex.")] = None,
    user: UserOption = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, for scripts.")] = False,
) -> None:
    """Check that a coding agent can reach Relay: the server, the agent's identity, the host's
    hooks and MCP server, the host itself. One line a check; exit 0 when all pass, 1 if not.

    Example: relay --agent builder doctor claude-code
    """
    from relay_cli import doctor as checks

    conn: Connection = ctx.obj or Connection()
    if host is None:
        raise typer.Exit(checks.report(checks.common(_url(conn), conn.agent), as_json))
    raise typer.Exit(_doctor(_wiring(conn, host, user), as_json))


def _doctor(wiring: Wiring, as_json: bool) -> int:
    from relay_cli import doctor as checks

    return checks.report(checks.for_host(wiring), as_json)


def _url(conn: Connection) -> str:
    return ClientConfig.resolve(conn.url, anonymous=True).url


def _wiring(conn: Connection, host: Host, user: bool) -> Wiring:
    relay = Path(sys.argv[0]).absolute() if Path(sys.argv[0]).name == "relay" else None
    command = str(relay) if relay is not None and relay.exists() else _beside_python()
    agent = conn.agent or _default_agent(host)
    return Wiring(host, command, _url(conn), agent, user, Path.cwd(), Path.home())


def _beside_python() -> str:
    """The ``relay`` script of this interpreter (a virtualenv's ``bin/relay``)."""
    script = Path(sys.executable).with_name("relay")
    if not script.exists():
        typer.echo(f"Error: no relay command beside {sys.executable}", err=True)
        raise typer.Exit(2)
    return str(script)


def _default_agent(host: Host) -> str:
    """``claude-code-<machine>``: the host and this machine's name, as an agent's id."""
    machine = "".join(c if c.isalnum() else "-" for c in socket.gethostname().lower())
    return f"{host}-{machine.strip('-') or 'local'}"[:64]


def _planned(wiring: Wiring) -> dict[Path, tuple[str | None, str]]:
    """Each file's text now, and with Relay's entries."""
    planned = {}
    for path in wiring.files():
        before = path.read_text() if path.exists() else None
        try:
            planned[path] = (before, wiring.connected(path, before))
        except SettingsError as exc:
            typer.echo(f"Error: {exc}", err=True)
            raise typer.Exit(1) from None
    return planned


def _diff(path: Path, before: str | None, after: str) -> list[str]:
    old = (before or "").splitlines(keepends=True)
    return list(difflib.unified_diff(old, after.splitlines(keepends=True), str(path), str(path)))


def _identify(conn: Connection, wiring: Wiring, wait: int) -> None:
    """The agent's token, kept: the one kept if the server takes it; else registered as the
    operator; else enrolled, and waited for until the operator approves."""
    path = identity_path(wiring.url, wiring.agent)
    token = kept_token(wiring.url, wiring.agent)
    if token is not None and _caller(wiring.url, token) == wiring.agent:
        typer.echo(f"agent {wiring.agent}: its kept token is valid")
        return
    operator = ClientConfig.resolve(wiring.url, token=conn.token).token
    if operator is not None and _caller(wiring.url, operator) == OPERATOR:
        with RelayClient(wiring.url, token=operator) as client:
            registered = client.agents.register(wiring.agent, kind=wiring.host)
            if registered.token is None:  # registered before, its token not kept here
                registered = client.agents.register(wiring.agent, rotate_token=True)
        assert registered.token is not None
        keep(path, Identity(token=registered.token))
        typer.echo(f"registered agent {wiring.agent}; its token is kept in {path} (0600)")
        return
    from relay_client import enroll_and_wait

    typer.echo(
        f"No operator rights here: asking the operator to let agent {wiring.agent} join"
        f" (their phone and the console show the request); waiting up to {wait} s"
    )
    try:
        enrolled = enroll_and_wait(wiring.agent, url=wiring.url, kind=wiring.host, timeout=wait)
    except errors.RelayError as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(1) from None
    enrolled.close()
    typer.echo(f"the operator approved agent {wiring.agent}; its token is kept in {path} (0600)")


def _caller(url: str, token: str) -> str | None:
    """Whose ``token`` is, as the server says; None where it refuses it or cannot be reached."""
    try:
        with RelayClient(url, token=token, max_retries=0) as client:
            return client.status().caller
    except errors.RelayError:
        return None


def _record_path(wiring: Wiring) -> Path:
    scope = "user" if wiring.user else str(wiring.project.resolve())
    key = hashlib.sha256(f"{wiring.host}\n{scope}".encode()).hexdigest()[:16]
    return Path(user_state_dir("relay", appauthor=False)) / "connections" / f"{key}.json"


def _load_record(path: Path) -> dict[str, Any]:
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return kept if isinstance(kept, dict) else {}
