"""External A2A agents, reached for Relay's agents (``relay_core.ports.RemoteAgents``): their
card read over HTTP, their JSON-RPC binding of A2A 1.0 called, with the specification's types
(a2a_pb2, protoc's output from a2a.proto) checking what goes and what comes back. Those
types (and protobuf under them) load with the first call: a server whose agents reach no
external agent never imports them.

Only public addresses are reached unless ``RELAY_A2A_ALLOW_PRIVATE`` says otherwise (the card's
endpoint included, checked as it is connected to); no redirect is followed; an answer is read up
to ``MAX_ANSWER_BYTES``; each request waits ``TIMEOUT`` seconds at most.
"""

from __future__ import annotations

import json
import uuid
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import aiohttp

from relay_core import webhooks as hooks
from relay_core.ports import RemoteCard, RemoteFailed
from relay_server.outbound import PublicResolver, literal_host
from relay_server.tracing import outbound

if TYPE_CHECKING:
    from google.protobuf.message import Message as ProtoMessage

SETTING = "RELAY_A2A_ALLOW_PRIVATE"
CARD_PATH = "/.well-known/agent-card.json"
TIMEOUT = 30.0
MAX_ANSWER_BYTES = 1_000_000
# Messages of a task's history asked for with it: what the agent said last, not all it said.
HISTORY = 10
USER_AGENT = "Relay-A2A/1"


def card_url(url: str) -> str:
    """Where the card of the agent at ``url`` is: ``url`` itself when it names a .json file,
    else the well-known path under it."""
    if urlsplit(url).path.endswith(".json"):
        return url
    return url.rstrip("/") + CARD_PATH


def _types() -> ModuleType:
    """A2A 1.0's messages, generated from the specification (relay_server/a2a/a2a.proto)."""
    from relay_server.a2a import a2a_pb2

    return a2a_pb2


def _as_json(message: ProtoMessage) -> dict[str, Any]:
    from google.protobuf import json_format

    found: dict[str, Any] = json_format.MessageToDict(message)
    return found


def _parsed(value: Any, into: ProtoMessage, what: str) -> Any:
    from google.protobuf import json_format

    try:
        return json_format.ParseDict(value, into, ignore_unknown_fields=True)
    except (json_format.ParseError, TypeError, ValueError) as exc:
        raise RemoteFailed(f"{what} is not what A2A 1.0 says it is: {exc}") from None


class RemoteA2A:
    """External A2A agents over aiohttp's client, one session for the process."""

    def __init__(self, allow_private: bool = False) -> None:
        self.allow_private = allow_private
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            resolver = None if self.allow_private else PublicResolver(SETTING)
            connector = aiohttp.TCPConnector(limit=64, resolver=resolver, use_dns_cache=False)
            self._session = aiohttp.ClientSession(
                connector=connector,
                headers={"user-agent": USER_AGENT},
                trace_configs=outbound("a2a"),
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def card(self, url: str) -> RemoteCard:
        pb = _types()
        where = card_url(url)
        card = _parsed(await self._request("GET", where), pb.AgentCard(), f"the card at {where}")
        for interface in card.supported_interfaces:
            if interface.protocol_binding.upper() == "JSONRPC" and (
                interface.protocol_version.startswith("1.")
            ):
                return RemoteCard(card.name, interface.url)
        raise RemoteFailed(f"the card at {where} offers no JSON-RPC binding of A2A 1.0")

    async def send(
        self, endpoint: str, message: dict[str, Any], bearer: str | None
    ) -> dict[str, Any]:
        pb = _types()
        request = pb.SendMessageRequest(
            message=_parsed(message, pb.Message(), "the message"),
            configuration=pb.SendMessageConfiguration(
                return_immediately=True, history_length=HISTORY
            ),
        )
        result = await self._call(endpoint, "SendMessage", _as_json(request), bearer)
        answer = _parsed(result, pb.SendMessageResponse(), "its answer to SendMessage")
        if answer.WhichOneof("payload") is None:
            raise RemoteFailed("its answer to SendMessage holds neither a task nor a message")
        return _as_json(answer)

    async def task(self, endpoint: str, task_id: str, bearer: str | None) -> dict[str, Any]:
        pb = _types()
        params = _as_json(pb.GetTaskRequest(id=task_id, history_length=HISTORY))
        result = await self._call(endpoint, "GetTask", params, bearer)
        return _as_json(_parsed(result, pb.Task(), "its answer to GetTask"))

    async def _call(
        self, endpoint: str, method: str, params: dict[str, Any], bearer: str | None
    ) -> Any:
        """A JSON-RPC request of A2A 1.0; its result. An error the agent answers is
        ``RemoteFailed`` in its words."""
        request = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}
        headers = {"A2A-Version": "1.0"}
        if bearer is not None:
            headers["Authorization"] = f"Bearer {bearer}"
        answer = await self._request("POST", endpoint, request, headers)
        if not isinstance(answer, dict):
            raise RemoteFailed(f"its answer to {method} is not a JSON-RPC response")
        if isinstance(answer.get("error"), dict):
            error = answer["error"]
            raise RemoteFailed(
                f"it refused {method}: {str(error.get('message'))[:200]} "
                f"(JSON-RPC error {error.get('code')})"
            )
        if "result" not in answer:
            raise RemoteFailed(f"its answer to {method} holds no result")
        return answer["result"]

    async def _request(
        self,
        method: str,
        url: str,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """One request; its answer's JSON. Every failure is ``RemoteFailed``, in words."""
        host = urlsplit(url).hostname or url
        if not self.allow_private and literal_host(url):
            refusal = await hooks.address_refusal(url, SETTING)
            if refusal is not None:
                raise RemoteFailed(refusal)
        try:
            async with self._client().request(
                method,
                url,
                json=body,
                headers=headers,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=TIMEOUT),
            ) as response:
                text = await response.content.read(MAX_ANSWER_BYTES + 1)
                status = response.status
        except TimeoutError:
            raise RemoteFailed(f"{host} did not answer within {TIMEOUT:g} s") from None
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, hooks.AddressRefused):
                raise RemoteFailed(str(exc.os_error)) from None
            raise RemoteFailed(f"{host} could not be reached ({type(exc).__name__})") from None
        except aiohttp.ClientError as exc:
            raise RemoteFailed(f"{host} could not be reached ({type(exc).__name__})") from None
        if len(text) > MAX_ANSWER_BYTES:
            raise RemoteFailed(f"{url} answered more than {MAX_ANSWER_BYTES} bytes")
        if not 200 <= status < 300:
            raise RemoteFailed(f"{url} answered HTTP {status}")
        try:
            return json.loads(text)
        except ValueError:
            raise RemoteFailed(f"{url} answered what is not JSON") from None
