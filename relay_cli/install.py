"""How this Relay was installed, to name the command that installs it again: from a clone
(editable), from a wheel file, or from a package index (``direct_url.json``, PEP 610)."""

from __future__ import annotations

import json
import shlex
import sys
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

DISTRIBUTION = "relay-agents"


def reinstall_command() -> str:
    """The pip command that installs this Relay again, with everything it depends on."""
    return _pip(None)


def install_command(extra: str) -> str:
    """The pip command that adds ``extra`` (``server``, ``postgres``…) to this Relay, from
    where it was installed."""
    return _pip(extra)


def _pip(extra: str | None) -> str:
    pip = f"{sys.executable} -m pip install"
    again = "" if extra else "--force-reinstall "
    wanted = f"[{extra}]" if extra else ""
    clone = Path(__file__).resolve().parent.parent
    if (clone / "pyproject.toml").exists() and (clone / "relay_server").is_dir():
        # Run from a clone (an editable install, or beside it).
        return f"{pip} -e {shlex.quote(f'{clone}{wanted}')}"
    try:
        given = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        given = None
    found = json.loads(given) if given else {}
    url = found.get("url", "")
    path = unquote(urlsplit(url).path) if url.startswith("file://") else url
    if found.get("dir_info", {}).get("editable"):
        return f"{pip} -e {shlex.quote(f'{path}{wanted}')}"
    if path:
        return f"{pip} {again}{shlex.quote(f'{path}{wanted}')}"
    return f"{pip} {again}{shlex.quote(f'{DISTRIBUTION}{wanted}')}"


def without_the_server(command: str, missing: ImportError) -> str:
    """What ``relay <command>`` says in an install without the server (the agent's): one line,
    with the command that adds it."""
    return (
        f"relay {command} runs the server, which this install of Relay leaves out"
        f" ({missing.name or missing} is missing): {install_command('server')}"
    )
