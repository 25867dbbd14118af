"""docs/deploy.md's nginx configuration, run for real in front of `relay serve`.

The server block is taken from the document itself (its ```nginx block), with only the
addresses changed, so the configuration users copy is the one tested.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.live import LiveServer, free_port, live_server

DEPLOY = Path(__file__).parents[2] / "docs" / "deploy.md"
NGINX = shutil.which("nginx") or next(
    (path for path in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if Path(path).exists()), None
)
pytestmark = pytest.mark.skipif(
    NGINX is None, reason="nginx is not installed (apt-get install nginx-light)"
)


def documented_config(relay_port: int, port: int) -> str:
    """The documented upstream and server blocks, pointed at this test's Relay and port."""
    block = re.search(r"```nginx\n(.*?)```", DEPLOY.read_text(), re.S)
    assert block is not None, "docs/deploy.md has no nginx block"
    config = block.group(1)
    config = re.sub(
        r"(upstream relay \{\n)(\s*server [^\n]+\n)+",
        rf"\g<1>    server 127.0.0.1:{relay_port};\n",
        config,
    )
    config = config.replace("listen 443 ssl;", f"listen 127.0.0.1:{port};")
    assert f"127.0.0.1:{relay_port}" in config and f"127.0.0.1:{port}" in config
    return config


@contextmanager
def nginx(root: Path, relay_port: int) -> Iterator[str]:
    """nginx in the foreground with the documented config; its base URL."""
    root.mkdir()
    root.chmod(0o777)  # its workers may run as nobody
    port = free_port()
    (root / "nginx.conf").write_text(
        f"daemon off;\npid {root}/nginx.pid;\nerror_log {root}/error.log;\n"
        "events {}\nhttp {\n"
        f"    access_log off;\n    client_body_temp_path {root}/body;\n"
        f"    proxy_temp_path {root}/proxy;\n"
        f"{documented_config(relay_port, port)}\n}}\n"
    )
    assert NGINX is not None
    process = subprocess.Popen([NGINX, "-c", str(root / "nginx.conf"), "-p", str(root)])
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                httpx.get(f"{url}/health", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None, "nginx did not start"
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def relay_port(server: LiveServer) -> int:
    return int(server.url.rsplit(":", 1)[1])


def test_the_documented_nginx_config(tmp_path: Path) -> None:
    with (
        live_server(tmp_path, RELAY_TRUSTED_PROXIES="127.0.0.1/32") as server,
        nginx(tmp_path / "nginx", relay_port(server)) as url,
    ):
        op = {"Authorization": f"Bearer {server.operator_token}"}
        # The client's address reaches Relay (this client connects from 127.0.0.5).
        client = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.5"))
        with client:
            refused = client.get(f"{url}/v1/agents", headers={"Authorization": "Bearer nope"})
            assert refused.status_code == 401
        audit = httpx.get(f"{server.url}/v1/actions", headers=op).json()["actions"]
        assert audit[0]["action"] == "auth.refused" and audit[0]["params"]["remote"] == "127.0.0.5"
        # nginx's request id reaches Relay on the stream location too, and comes back.
        with httpx.stream("GET", f"{url}/v1/events/stream", headers=op) as stream:
            assert stream.status_code == 200
            assert re.fullmatch(r"[0-9a-f]{32}", stream.headers["X-Request-ID"])
        # What nginx answers itself is JSON in Relay's shape.
        too_large = httpx.post(f"{url}/v1/tasks", headers=op, content=b"x" * (2 * 1024 * 1024))
        assert too_large.status_code == 413
        assert too_large.json()["code"] == "payload_too_large"
        server.process.terminate()
        server.process.wait(timeout=15)
        down = httpx.get(f"{url}/health")
        assert down.status_code == 503 and down.json()["code"] == "unavailable"
        assert down.headers["Retry-After"] == "1"
