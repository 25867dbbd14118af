"""The client's HTTP behaviour with a mocked transport (respx): errors, retries, timeouts,
configuration. No server here: these are the cases a real server cannot be made to produce."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from relay_api import errors as domain
from relay_client import (
    AsyncRelayClient,
    AuthenticationError,
    BridgeError,
    ConflictError,
    ConnectionError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
    RelayClient,
    ServerError,
    TimeoutError,
    UnprocessableEntityError,
    enroll_and_wait,
    errors,
)
from relay_client._base import backoff
from relay_client.config import ClientConfig
from relay_server import http_errors

URL = "http://relay.test"
AGENTS = f"{URL}/v1/agents"
EMPTY = {"agents": []}


def sync_client(**kwargs: Any) -> tuple[RelayClient, list[float]]:
    client = RelayClient(URL, token="rly_agent_x", **kwargs)
    slept: list[float] = []
    client._sleep = slept.append
    return client, slept


def async_client(**kwargs: Any) -> tuple[AsyncRelayClient, list[float]]:
    client = AsyncRelayClient(URL, token="rly_agent_x", **kwargs)
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    client._sleep = sleep
    return client, slept


@pytest.mark.parametrize(
    ("status", "cls", "code"),
    [
        (401, AuthenticationError, "unauthenticated"),
        (403, PermissionDeniedError, "forbidden"),
        (404, NotFoundError, "not_found"),
        (408, errors.RequestTimeoutError, "request_timeout"),
        (409, ConflictError, "conflict"),
        (413, PayloadTooLargeError, "payload_too_large"),
        (429, RateLimitError, "rate_limited"),
        (500, ServerError, "internal"),
        (502, BridgeError, "bridge_error"),
        (503, errors.ServiceUnavailableError, "storage_unavailable"),
    ],
)
@respx.mock
def test_each_status_maps_to_its_error(status: int, cls: type[Exception], code: str) -> None:
    respx.get(AGENTS).mock(
        return_value=httpx.Response(
            status, json={"detail": "it went wrong", "code": code}, headers={"X-Request-ID": "r1"}
        )
    )
    client, _ = sync_client(max_retries=0)
    with pytest.raises(cls) as caught:
        client.agents.list()
    error = caught.value
    assert isinstance(error, errors.APIStatusError)
    assert (error.status_code, error.code, error.detail, error.request_id) == (
        status,
        code,
        "it went wrong",
        "r1",
    )


@respx.mock
def test_422_carries_the_parsed_detail_list() -> None:
    detail = [{"type": "missing", "loc": ["body", "agent_id"], "msg": "Field required"}]
    respx.post(f"{URL}/v1/agents/register").mock(
        return_value=httpx.Response(422, json={"detail": detail})
    )
    client, _ = sync_client()
    with pytest.raises(UnprocessableEntityError) as caught:
        client.agents.register("a")
    assert caught.value.errors == detail
    assert caught.value.code == "validation_error"
    assert "body.agent_id: Field required" in str(caught.value)
    assert errors.ValidationError is UnprocessableEntityError


@respx.mock
def test_5xx_and_429_are_retried_with_backoff_honouring_retry_after() -> None:
    route = respx.get(AGENTS).mock(
        side_effect=[
            httpx.Response(503, json={"detail": "busy", "code": "internal"}),
            httpx.Response(
                429,
                json={"detail": "slow down", "code": "rate_limited"},
                headers={"Retry-After": "7"},
            ),
            httpx.Response(200, json=EMPTY),
        ]
    )
    client, slept = sync_client(max_retries=2)
    assert client.agents.list().agents == []
    assert route.call_count == 3
    assert 0.25 <= slept[0] <= 0.5  # jittered first backoff
    assert slept[1] == 7.0  # the server's Retry-After wins


@respx.mock
def test_retry_after_is_capped() -> None:
    respx.get(AGENTS).mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "86400"}, json={"detail": "x"}),
            httpx.Response(200, json=EMPTY),
        ]
    )
    client, slept = sync_client()
    client.agents.list()
    assert slept == [60.0]


@respx.mock
def test_409_is_never_retried() -> None:
    route = respx.post(f"{URL}/v1/tasks/1/claim").mock(
        return_value=httpx.Response(409, json={"detail": "taken", "code": "conflict"})
    )
    client, slept = sync_client(max_retries=5)
    with pytest.raises(ConflictError):
        client.tasks.claim(1, agent_id="a")
    assert route.call_count == 1 and slept == []


@respx.mock
def test_retries_give_up_with_the_last_error() -> None:
    route = respx.get(AGENTS).mock(
        return_value=httpx.Response(503, json={"detail": "down", "code": "internal"})
    )
    client, slept = sync_client(max_retries=3)
    with pytest.raises(ServerError):
        client.agents.list()
    assert route.call_count == 4 and len(slept) == 3
    assert all(later >= 0 for later in slept)


@respx.mock
def test_connection_errors_are_retried_then_raised() -> None:
    route = respx.get(AGENTS).mock(side_effect=httpx.ConnectError("refused"))
    client, slept = sync_client(max_retries=2)
    with pytest.raises(ConnectionError) as caught:
        client.agents.list()
    assert route.call_count == 3 and len(slept) == 2
    assert isinstance(caught.value, OSError)  # also the builtin ConnectionError


@respx.mock
def test_a_lost_answer_to_a_plain_post_is_not_repeated() -> None:
    route = respx.post(f"{URL}/v1/tasks/1/complete").mock(side_effect=httpx.ReadTimeout("slow"))
    client, _ = sync_client(max_retries=3)
    with pytest.raises(TimeoutError):
        client.tasks.complete(1, agent_id="a")
    assert route.call_count == 1
    assert "Idempotency-Key" not in route.calls.last.request.headers


@respx.mock
def test_a_create_is_retried_with_one_idempotency_key() -> None:
    created = {
        "message_id": 1,
        "from_agent": "a",
        "to": "b",
        "text": "hi",
        "status": "pending",
        "created_at": "2026-11-22T00:00:00Z",
    }
    route = respx.post(f"{URL}/v1/messages").mock(
        side_effect=[
            httpx.ReadTimeout("answer lost"),
            httpx.Response(503, json={"detail": "restarting", "code": "internal"}),
            httpx.Response(201, json=created),
            httpx.Response(201, json=created),
        ]
    )
    client, _ = sync_client(max_retries=3)
    assert client.messages.send("hi", to="b").message_id == 1
    keys = {call.request.headers["Idempotency-Key"] for call in route.calls}
    assert route.call_count == 3 and len(keys) == 1
    [key] = keys
    assert key.startswith("rly-")
    client.messages.send("again", to="b")
    assert route.calls.last.request.headers["Idempotency-Key"] != key


@respx.mock
def test_joining_a_room_is_retried_safely_like_every_create() -> None:
    member = {"room_id": "ops", "agent_id": "a", "joined_at": "2026-11-22T00:00:00Z"}
    route = respx.post(f"{URL}/v1/rooms/ops/join").mock(
        side_effect=[httpx.ReadTimeout("answer lost"), httpx.Response(201, json=member)]
    )
    client, _ = sync_client(max_retries=2)
    assert client.rooms.join("ops", agent_id="a").room_id == "ops"
    keys = [call.request.headers.get("Idempotency-Key") for call in route.calls]
    assert len(keys) == 2 and keys[0] is not None and keys[0] == keys[1]


@respx.mock
def test_a_read_timeout_on_get_is_retried() -> None:
    route = respx.get(AGENTS).mock(
        side_effect=[httpx.ReadTimeout("slow"), httpx.Response(200, json=EMPTY)]
    )
    client, _ = sync_client()
    client.agents.list()
    assert route.call_count == 2


def test_timeouts_are_configurable() -> None:
    client = RelayClient(URL, timeout=2.5)
    assert client._http.timeout == httpx.Timeout(2.5)
    client.close()


@respx.mock
async def test_the_async_twin_maps_errors_and_retries_alike() -> None:
    route = respx.get(AGENTS).mock(
        side_effect=[
            httpx.Response(502, json={"detail": "telegram down", "code": "bridge_error"}),
            httpx.Response(200, json=EMPTY),
        ]
    )
    client, slept = async_client()
    assert (await client.agents.list()).agents == []
    assert route.call_count == 2 and len(slept) == 1
    respx.get(f"{URL}/v1/tasks/9").mock(
        return_value=httpx.Response(
            404, json={"detail": "task 9 does not exist", "code": "not_found"}
        )
    )
    with pytest.raises(NotFoundError):
        await client.tasks.get(9)
    respx.get(f"{URL}/v1/rooms").mock(side_effect=httpx.ConnectTimeout("no route"))
    with pytest.raises(TimeoutError):
        await client.rooms.list()
    await client.close()


@respx.mock
def test_headers_carry_token_and_agent() -> None:
    route = respx.get(AGENTS).mock(return_value=httpx.Response(200, json=EMPTY))
    with RelayClient(URL, token="rly_agent_abc", agent_id="alice") as client:
        client.agents.list()
    request = route.calls.last.request
    assert request.headers["Authorization"] == "Bearer rly_agent_abc"
    assert request.headers["X-Agent-ID"] == "alice"


def test_backoff_grows_and_is_bounded() -> None:
    assert all(0.25 <= backoff(0, None) <= 0.5 for _ in range(50))
    assert all(2.0 <= backoff(3, None) <= 4.0 for _ in range(50))
    assert all(backoff(20, None) <= 8.0 for _ in range(50))
    assert backoff(0, 3.0) == 3.0


def test_configuration_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("RELAY_URL", "RELAY_TOKEN", "RELAY_AGENT_ID"):
        monkeypatch.delenv(name, raising=False)
    config_dir = tmp_path / "config"
    monkeypatch.setattr("relay_client.config.user_config_dir", lambda *a, **k: str(config_dir))
    monkeypatch.setenv("RELAY_DATA_DIR", str(tmp_path / "data"))

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "operator_token").write_text("rly_op_local\n")
    local = ClientConfig.resolve()
    assert (local.url, local.token, local.agent_id) == (
        "http://127.0.0.1:8765",
        "rly_op_local",
        None,
    )
    remote = ClientConfig.resolve("https://relay.example.com")
    assert remote.token is None  # a local token file never goes to another host

    config_dir.mkdir()
    (config_dir / "config.toml").write_text(
        'url = "http://file:1"\ntoken = "rly_agent_file"\nagent_id = "from-file"\n'
    )
    from_file = ClientConfig.resolve()
    assert (from_file.url, from_file.token, from_file.agent_id) == (
        "http://file:1",
        "rly_agent_file",
        "from-file",
    )

    monkeypatch.setenv("RELAY_URL", "http://env:2")
    monkeypatch.setenv("RELAY_TOKEN", "rly_agent_env")
    monkeypatch.setenv("RELAY_AGENT_ID", "from-env")
    from_env = ClientConfig.resolve()
    assert (from_env.url, from_env.token, from_env.agent_id) == (
        "http://env:2",
        "rly_agent_env",
        "from-env",
    )
    explicit = ClientConfig.resolve("http://arg:3/", token="rly_agent_arg", agent_id="from-arg")
    assert (explicit.url, explicit.token, explicit.agent_id) == (
        "http://arg:3",
        "rly_agent_arg",
        "from-arg",
    )


def test_agent_id_is_required_where_an_agent_acts() -> None:
    with RelayClient(URL) as client, pytest.raises(ValueError, match="agent_id is required"):
        client.agents.heartbeat()


# The client's class for each status the server answers.
CLASS_OF_STATUS: dict[int, type[errors.APIStatusError]] = {
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    429: RateLimitError,
    500: ServerError,
    502: BridgeError,
    503: errors.ServiceUnavailableError,
}


def domain_errors() -> list[type[domain.RelayError]]:
    """Every error class the server raises on purpose, its transport's own included."""
    found, todo = [], [domain.RelayError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return [cls for cls in found if cls is not domain.InvalidInput]  # a 422 list, no code


@pytest.mark.parametrize("error", domain_errors(), ids=lambda cls: cls.__name__)
@respx.mock
def test_the_body_code_picks_the_class_of_the_status_the_server_answers(
    error: type[domain.RelayError],
) -> None:
    """Each error reaches the client as the class of the status the server answers it with,
    chosen by its code: also when something in between changed the status (here to 500)."""
    expected = CLASS_OF_STATUS[http_errors.status_of(error)]
    for sent in (http_errors.status_of(error), 500):
        respx.get(AGENTS).mock(
            return_value=httpx.Response(sent, json={"detail": "x", "code": error.code})
        )
        client, _ = sync_client(max_retries=0)
        with pytest.raises(errors.APIStatusError) as caught:
            client.agents.list()
        assert type(caught.value) is expected, (sent, type(caught.value))


@respx.mock
def test_enrolling_sends_no_credential_the_environment_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``enroll_and_wait`` asks a public endpoint: a token or agent id in the environment (the
    operator's, say) is not sent along."""
    monkeypatch.setenv("RELAY_TOKEN", "rly_op_not-for-an-enrollment")
    monkeypatch.setenv("RELAY_AGENT_ID", "someone")
    created = {
        "enroll_id": 1,
        "agent_id": "carol",
        "claim": "rly_claim_x",
        "status": "pending",
        "approval_id": 1,
    }
    asked = respx.post(f"{URL}/v1/enroll").mock(return_value=httpx.Response(201, json=created))
    polled = respx.get(f"{URL}/v1/enroll/1").mock(
        return_value=httpx.Response(404, json={"detail": "gone", "code": "not_found"})
    )
    with pytest.raises(NotFoundError):
        enroll_and_wait("carol", url=URL, poll_interval=0.01)
    for call in [*asked.calls, *polled.calls]:
        assert "Authorization" not in call.request.headers
        assert "X-Agent-ID" not in call.request.headers


def test_a_plain_http_server_is_reached_without_loading_tls() -> None:
    """httpx loads the CA bundle for every client it makes (60 ms of a command's start); a
    client of an http:// server has no TLS to verify and skips it, one of https:// verifies."""
    assert ClientConfig.resolve("http://127.0.0.1:8765").http_options()["verify"] is False
    assert "verify" not in ClientConfig.resolve("https://relay.example").http_options()
