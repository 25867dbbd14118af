"""Behind a proxy: only a trusted proxy's X-Forwarded-For names the client."""

from __future__ import annotations

import asyncio
from typing import Any

from multidict import CIMultiDict

from tests.server.conftest import Api

# An address refills so slowly that a slow run (PostgreSQL on a loaded machine) cannot earn back
# a token while it sends its 25 requests: the burst of 20 alone decides which are refused.
SLOW_REFILL = 0.01


async def enroll_from(api: Api, n: int, forwarded: str) -> int:
    response = await api.client.post(
        "/v1/enroll", json={"agent_id": f"agent-{n}"}, headers={"X-Forwarded-For": forwarded}
    )
    await response.read()
    return response.status


async def test_a_trusted_proxy_has_each_client_limited_on_its_own(make_api: Any) -> None:
    api: Api = await make_api(trusted_proxies="127.0.0.0/8, ::1/128", enroll_rate_limit=SLOW_REFILL)
    statuses = [await enroll_from(api, n, f"203.0.113.{n}") for n in range(80)]
    assert statuses == [201] * 80
    # One client through the proxy is limited as one client (burst 20).
    statuses = [await enroll_from(api, 100 + n, "198.51.100.7") for n in range(25)]
    assert statuses.count(429) == 5


async def test_without_trusted_proxies_the_header_is_ignored(make_api: Any) -> None:
    api: Api = await make_api(enroll_rate_limit=SLOW_REFILL)
    statuses = [await enroll_from(api, n, f"203.0.113.{n}") for n in range(25)]
    assert statuses.count(429) == 5  # every request is the peer's, whatever it claims


async def test_a_client_cannot_slip_an_address_past_the_proxy(make_api: Any) -> None:
    api: Api = await make_api(trusted_proxies="127.0.0.1/32", enroll_rate_limit=SLOW_REFILL)
    # The client wrote the left part; the proxy appended the address it saw.
    statuses = [await enroll_from(api, n, f"10.9.9.{n}, 198.51.100.8") for n in range(25)]
    assert statuses.count(429) == 5


async def test_the_audit_records_the_forwarded_address(make_api: Any) -> None:
    api: Api = await make_api(trusted_proxies="127.0.0.1/32")
    await api.get(
        "/v1/agents",
        token="rly_agent_nobody",
        headers={"X-Forwarded-For": "203.0.113.9"},
        expect=401,
    )
    refused = [
        a for a in (await api.get("/v1/actions"))["actions"] if a["action"] == "auth.refused"
    ]
    assert refused[0]["params"]["remote"] == "203.0.113.9"


async def test_forwarded_addresses_on_two_lines_are_one_list(make_api: Any) -> None:
    """HAProxy's ``option forwardfor`` appends a line of its own after the client's."""
    api: Api = await make_api(trusted_proxies="127.0.0.1/32")
    two_lines = CIMultiDict(
        [
            ("Authorization", "Bearer rly_agent_nobody"),
            ("X-Forwarded-For", "6.6.6.6"),
            ("X-Forwarded-For", "203.0.113.4"),
        ]
    )
    response = await api.client.get("/v1/agents", headers=two_lines)
    assert response.status == 401
    refused = [
        a for a in (await api.get("/v1/actions"))["actions"] if a["action"] == "auth.refused"
    ]
    assert refused[0]["params"]["remote"] == "203.0.113.4"


async def test_a_forwarded_client_holds_at_most_its_share_of_requests_in_flight(
    make_api: Any,
) -> None:
    api: Api = await make_api(trusted_proxies="127.0.0.1/32", max_connections_per_address=2)
    await api.agent("fwd")

    async def wait_as(client: str) -> int:
        response = await api.client.get(
            "/v1/events",
            params={"wait": 3},
            headers={**api.headers("fwd", None), "X-Forwarded-For": client},
        )
        await response.read()
        return response.status

    waits = [asyncio.create_task(wait_as("198.51.100.1")) for _ in range(2)]
    await asyncio.sleep(0.3)
    third = await api.client.get(
        "/v1/agents", headers={**api.headers("fwd", None), "X-Forwarded-For": "198.51.100.1"}
    )
    assert third.status == 503 and (await third.json())["code"] == "unavailable"
    assert third.headers["Retry-After"] == "1"
    # The operator's token is served past the cap: agents never lock the operator out.
    operator = await api.client.get(
        "/v1/agents", headers={**api.headers(None, None), "X-Forwarded-For": "198.51.100.1"}
    )
    assert operator.status == 200
    other = await api.client.get(
        "/v1/agents", headers={**api.headers("fwd", None), "X-Forwarded-For": "198.51.100.2"}
    )
    assert other.status == 200
    assert await asyncio.gather(*waits) == [200, 200]
    again = await api.client.get(
        "/v1/agents", headers={**api.headers("fwd", None), "X-Forwarded-For": "198.51.100.1"}
    )
    assert again.status == 200  # the slots were given back
