"""Relay's API as a contract: its operations, the models on the wire, the errors by code and the
paging limits. Pure pydantic: the client side stands on it alone, and the server binds each
operation to the core's service that serves it (``relay_server.bindings``)."""

__version__ = "0.1.0"
# The operator's name wherever a caller or a writer is named; here, not in .models, so that
# what reads it on every hook event (relay_cli.reserved, relay_client.coding_agents) loads no
# pydantic.
OPERATOR = "operator"
