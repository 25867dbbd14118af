"""Where the server is and who the client is: arguments, the environment, the config file,
the local operator token. Standard library only (and platformdirs), so that what needs no HTTP
client yet (the coding agents' hooks, the CLI's start) does not import one; a ``NamedTuple``,
not a dataclass, whose ``inspect`` would cost every hook about 15 ms (docs/performance.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from platformdirs import user_config_dir

from relay_api import __version__
from relay_core.paths import default_data_dir, operator_token_path

DEFAULT_URL = "http://127.0.0.1:8765"
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 2
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}


def config_file_path() -> Path:
    """The client's config file: ``url``, ``token`` and ``agent_id`` keys (TOML)."""
    return Path(user_config_dir("relay", appauthor=False)) / "config.toml"


def _config_file() -> dict[str, Any]:
    path = config_file_path()
    if not path.exists():
        return {}
    import tomllib  # loaded only where a config file is: the hooks start without it

    with path.open("rb") as handle:
        return tomllib.load(handle)


def kept_token(url: str, agent_id: str) -> str | None:
    """The token kept for ``agent_id`` on the server at ``url`` (its identity file), if any."""
    from relay_client.identity import identity_path, load

    kept = load(identity_path(url.rstrip("/"), agent_id))
    return kept.token if kept is not None else None


def local_operator_token(url: str) -> str | None:
    """The operator token a server on this machine wrote in its data directory, if readable."""
    if urlsplit(url).hostname not in LOCAL_HOSTS:
        return None
    data_dir = Path(os.environ["RELAY_DATA_DIR"]) if os.environ.get("RELAY_DATA_DIR") else None
    path = operator_token_path(data_dir or default_data_dir())
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def where_tokens_are_looked_for(url: str) -> str:
    """Where ``ClientConfig.resolve`` looks for a token, in order, for people."""
    places = [
        "--token",
        "RELAY_TOKEN",
        "the agent's token relay connect kept (with --agent)",
        f"token in {config_file_path()}",
    ]
    if urlsplit(url).hostname in LOCAL_HOSTS:
        data_dir = os.environ.get("RELAY_DATA_DIR")
        path = operator_token_path(Path(data_dir) if data_dir else default_data_dir())
        where = (
            "from RELAY_DATA_DIR"
            if data_dir
            else "set RELAY_DATA_DIR to the server's data directory if it uses another"
        )
        places.append(f"the server's operator token at {path} ({where})")
    return ", ".join(places)


class ClientConfig(NamedTuple):
    """Where the server is and who the client is."""

    url: str
    token: str | None
    agent_id: str | None
    timeout: float
    max_retries: int

    @classmethod
    def resolve(
        cls,
        url: str | None = None,
        token: str | None = None,
        agent_id: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        anonymous: bool = False,
        local_operator: bool = True,
    ) -> ClientConfig:
        """Arguments first, then ``RELAY_URL``/``RELAY_TOKEN``/``RELAY_AGENT_ID``, then the token
        kept for the agent on this server (``relay connect``'s, ``enroll_and_wait``'s), then
        the config file, then (for a server on this machine, unless not ``local_operator``) the
        operator token file. An ``anonymous`` client (one that enrolls) takes only the URL: it
        sends no token and no agent id."""
        file = _config_file()
        url = url or os.environ.get("RELAY_URL") or file.get("url") or DEFAULT_URL
        if anonymous:
            token, agent_id = None, None
        else:
            agent_id = agent_id or os.environ.get("RELAY_AGENT_ID") or file.get("agent_id")
            token = token or os.environ.get("RELAY_TOKEN")
            token = token or (kept_token(url, agent_id) if agent_id else None) or file.get("token")
            token = token or (local_operator_token(url) if local_operator else None)
        return cls(
            url=url.rstrip("/"),
            token=token,
            agent_id=agent_id,
            timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
            max_retries=DEFAULT_MAX_RETRIES if max_retries is None else max_retries,
        )

    def headers(self) -> dict[str, str]:
        """Headers sent with every request."""
        headers = {"User-Agent": f"relay-client/{__version__}", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.agent_id:
            headers["X-Agent-ID"] = self.agent_id
        return headers

    def http_options(self) -> dict[str, Any]:
        """What an httpx client (sync or async) of this configuration is made with."""
        options = {"base_url": self.url, "headers": self.headers(), "timeout": self.timeout}
        if urlsplit(self.url).scheme == "http":
            # No TLS to verify on a plain-HTTP server (the client follows no redirect): httpx
            # would still load the system's CA bundle, 60 ms of every command's start.
            options["verify"] = False
        return options
