"""How this Relay was installed, to name the command that installs it again: from a clone
(editable), from a wheel file, or from a package index (``direct_url.json``, PEP 610)."""

from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

DISTRIBUTION = "relay-agents"


def reinstall_command() -> str:
    """The pip command that installs this Relay again, with everything it depends on."""
    pip = f"{sys.executable} -m pip install"
    clone = Path(__file__).resolve().parent.parent
    if (clone / "pyproject.toml").exists() and (clone / "relay_server").is_dir():
        return f"{pip} -e {clone}"  # run from a clone (an editable install, or beside it)
    try:
        given = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        given = None
    found = json.loads(given) if given else {}
    url = found.get("url", "")
    path = unquote(urlsplit(url).path) if url.startswith("file://") else url
    if found.get("dir_info", {}).get("editable"):
        return f"{pip} -e {path}"
    if path:
        return f"{pip} --force-reinstall {path}"
    return f"{pip} --force-reinstall {DISTRIBUTION}"
