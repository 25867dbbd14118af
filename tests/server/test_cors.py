"""Cross-origin calls from web pages: off by default; for the origins of RELAY_CORS_ORIGINS,
preflights are answered and responses carry the headers a page needs."""

from __future__ import annotations

from tests.server.conftest import ONE_BACKEND, OPERATOR_TOKEN, AppFactory

pytestmark = ONE_BACKEND

PAGE = "https://dash.example"
PREFLIGHT = {
    "Origin": PAGE,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
}


async def test_no_origin_is_allowed_by_default(make_api: AppFactory) -> None:
    api = await make_api()
    answer = await api.client.get("/health", headers={"Origin": PAGE})
    assert "Access-Control-Allow-Origin" not in answer.headers
    assert (await api.client.options("/v1/messages", headers=PREFLIGHT)).status == 405


async def test_a_listed_origin_may_call_and_read_what_it_needs(make_api: AppFactory) -> None:
    api = await make_api(cors_origins=f"{PAGE}, https://other.example")
    preflight = await api.client.options("/v1/messages", headers=PREFLIGHT)
    assert preflight.status == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == PAGE
    allowed = preflight.headers["Access-Control-Allow-Headers"].lower()
    assert {"authorization", "content-type", "idempotency-key"} <= set(allowed.split(","))
    assert "Access-Control-Allow-Credentials" not in preflight.headers  # bearer tokens only

    headers = {"Origin": PAGE, "Authorization": f"Bearer {OPERATOR_TOKEN}"}
    answer = await api.client.get("/v1/status", headers=headers)
    assert answer.status == 200 and answer.headers["Access-Control-Allow-Origin"] == PAGE
    assert "X-Request-ID" in answer.headers["Access-Control-Expose-Headers"]

    stranger = {**PREFLIGHT, "Origin": "https://evil.example"}
    refused = await api.client.options("/v1/messages", headers=stranger)
    assert refused.status == 403 and "Access-Control-Allow-Origin" not in refused.headers
